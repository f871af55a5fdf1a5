#!/usr/bin/env bash
# bench/run.sh — what `make bench` runs once the release binary is built. See bench/README.md.
#
# For each repetition: a fresh temporary database and configuration (listen on a free
# 127.0.0.1 port, one webhook secret, no api_key: dry-run mode), `pushward-bridge serve` in the
# background, wait for /readyz, one load run (bench/client.c), SIGTERM, then the durability check
# (rows in `deliveries` = 202 answers). Repetitions alternate throughput (closed loop) and latency
# (open loop at a fixed rate). The medians go to stdout and to $BENCH_OUT.
#
# Settings (environment):
#   BENCH_BIN          the daemon binary       (default: .build/release/pushward-bridge)
#   BENCH_RUNS         repetitions of each     (3)
#   BENCH_WARMUP       seconds not counted     (2)
#   BENCH_DURATION     seconds measured        (10)
#   BENCH_CONNECTIONS  closed-loop connections (16)
#   BENCH_RATE         open-loop rate, deliveries/s (1000)
#   BENCH_LATENCY_CONNECTIONS  open-loop connections (32)
#   BENCH_POOL         pre-generated deliveries (100000; none is sent twice within a repetition)
#   BENCH_REPOS        repositories the runs spread over (20)
#   BENCH_QUIET_WAIT   seconds to wait for an idle machine before each repetition (60)
#   BENCH_DRAIN        seconds to wait for answers still due after the window (30)
#   BENCH_OUT          the JSON summary        (.build/bench/latest.json)
#   BENCH_KEEP         1: keep the temporary directory (logs, databases) for a look afterwards
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BENCH_BIN:-$ROOT/.build/release/pushward-bridge}
RUNS=${BENCH_RUNS:-3}
WARMUP=${BENCH_WARMUP:-2}
DURATION=${BENCH_DURATION:-10}
CONNECTIONS=${BENCH_CONNECTIONS:-16}
RATE=${BENCH_RATE:-1000}
LATENCY_CONNECTIONS=${BENCH_LATENCY_CONNECTIONS:-32}
POOL=${BENCH_POOL:-100000}
REPOS=${BENCH_REPOS:-20}
QUIET_WAIT=${BENCH_QUIET_WAIT:-60}
DRAIN=${BENCH_DRAIN:-30}
OUT=${BENCH_OUT:-$ROOT/.build/bench/latest.json}
SECRET="bench-secret-$$-$RANDOM"

say() { printf '%s\n' "$*" >&2; }

[ -x "$BIN" ] || { say "bench: no daemon binary at $BIN (run: swift build -c release)"; exit 1; }
command -v python3 >/dev/null || { say "bench: python3 is needed"; exit 1; }
CC=${CC:-$(command -v gcc || command -v cc || command -v clang || true)}
[ -n "$CC" ] || { say "bench: a C compiler (gcc) is needed for bench/client.c"; exit 1; }
# Bounds the whole thing: (warm-up + window + drain 10 s + start/stop ~20 s + quiet wait) per repetition.
for value in "$RUNS" "$WARMUP" "$DURATION" "$QUIET_WAIT" "$DRAIN"; do
    [[ "$value" =~ ^[0-9]+$ ]] || { say "bench: BENCH_RUNS/WARMUP/DURATION/QUIET_WAIT must be whole numbers"; exit 1; }
done
[ "$RUNS" -ge 1 ] && [ "$RUNS" -le 20 ] && [ "$DURATION" -ge 1 ] && [ "$DURATION" -le 120 ] \
    && [ "$WARMUP" -le 60 ] && [ "$QUIET_WAIT" -le 600 ] && [ "$DRAIN" -le 120 ] \
    || { say "bench: BENCH_RUNS 1-20, BENCH_DURATION 1-120, BENCH_WARMUP 0-60, BENCH_QUIET_WAIT 0-600, BENCH_DRAIN 0-120"; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pushward-bench.XXXXXX")
DAEMON_PID=""
cleanup() {
    if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
        kill -TERM "$DAEMON_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$DAEMON_PID" 2>/dev/null || true
    fi
    if [ "${BENCH_KEEP:-0}" = 1 ]; then say "bench: kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Busy share of all CPUs over one second, in percent (idle and iowait count as idle).
machine_busy() {
    python3 - <<'EOF'
import time
def read():
    v = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    return sum(v) - v[3] - v[4], sum(v)
b0, t0 = read(); time.sleep(1); b1, t1 = read()
print(round(100 * (b1 - b0) / max(t1 - t0, 1), 1))
EOF
}

# Waits (at most QUIET_WAIT s) for the machine to be nearly idle; prints the last busy figure.
wait_quiet() {
    local busy waited=0
    busy=$(machine_busy)
    while python3 -c "import sys; sys.exit(0 if $busy > 15 else 1)" && [ "$waited" -lt "$QUIET_WAIT" ]; do
        [ "$waited" -eq 0 ] && say "   waiting for the machine to quieten (busy ${busy}%; at most ${QUIET_WAIT}s)"
        sleep 1
        waited=$((waited + 2))
        busy=$(machine_busy)
    done
    echo "$busy"
}

readyz() {
    if command -v curl >/dev/null; then
        curl -fsS -m 1 "http://127.0.0.1:$1/readyz" >/dev/null 2>&1
    else
        python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$1/readyz', timeout=1)" \
            >/dev/null 2>&1
    fi
}

count_rows() {
    python3 - "$1" <<'EOF'
import json, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
outcomes = dict(db.execute("SELECT outcome, count(*) FROM deliveries GROUP BY outcome").fetchall())
print(json.dumps({"rows": sum(outcomes.values()), "outcomes": outcomes,
                  "runs": db.execute("SELECT count(*) FROM runs").fetchone()[0],
                  "pushes": db.execute("SELECT count(*) FROM pushes").fetchone()[0]}))
EOF
}

say "== pushward-bridge benchmark"
say "   binary: $BIN"
say "   compiling bench/client.c"
"$CC" -O2 -o "$WORK/client" "$ROOT/bench/client.c" -lm
say "   generating $POOL signed deliveries over $REPOS repositories (before any timing)"
python3 "$ROOT/bench/gen.py" --out "$WORK/pool.bin" --count "$POOL" --secret "$SECRET" --repos "$REPOS" \
    >"$WORK/pool.json"
say "   pool: $(cat "$WORK/pool.json")"

RESULTS="$WORK/results.jsonl"
: >"$RESULTS"

# One repetition: $1 = closed|open, $2 = index.
repetition() {
    local mode=$1 index=$2 dir="$WORK/rep-$1-$2" port admin background
    mkdir -p "$dir"
    background=$(wait_quiet)
    port=$(free_port)
    admin=$(free_port)
    cat >"$dir/config.json" <<EOF
{
  "listen": "127.0.0.1:$port",
  "admin_listen": "127.0.0.1:$admin",
  "database": "$dir/bridge.sqlite",
  "github": { "webhook_secrets": ["$SECRET"] },
  "pushward": { "api_key": "" }
}
EOF
    # PUSHWARD_* variables of the caller must not redirect the benchmark (no API key, this file only).
    env -u PUSHWARD_API_KEY -u PUSHWARD_API_KEY_FILE -u PUSHWARD_LISTEN -u PUSHWARD_ADMIN_LISTEN \
        -u PUSHWARD_DATABASE -u PUSHWARD_WEBHOOK_SECRETS -u PUSHWARD_WEBHOOK_SECRETS_FILE -u PUSHWARD_URL \
        -u CREDENTIALS_DIRECTORY \
        "$BIN" serve --config "$dir/config.json" 2>"$dir/daemon.log" &
    DAEMON_PID=$!
    local ready=0
    for _ in $(seq 100); do
        if readyz "$port"; then ready=1; break; fi
        kill -0 "$DAEMON_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ "$ready" != 1 ]; then
        say "bench: the daemon did not become ready; its log:"
        tail -20 "$dir/daemon.log" >&2
        exit 1
    fi

    local args=(--pool "$WORK/pool.bin" --port "$port" --warmup "$WARMUP" --duration "$DURATION" --drain "$DRAIN"
        --pid "$DAEMON_PID")
    if [ "$mode" = closed ]; then
        args+=(--mode closed --connections "$CONNECTIONS")
    else
        args+=(--mode open --rate "$RATE" --connections "$LATENCY_CONNECTIONS")
    fi
    "$WORK/client" "${args[@]}" >"$dir/client.json"

    local cpu_ticks
    cpu_ticks=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat" 2>/dev/null || echo 0)
    if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
        local crashed=0
        wait "$DAEMON_PID" || crashed=$?
        DAEMON_PID=""
        if grep -q '"shutting down"' "$dir/daemon.log"; then
            # It stopped in order, on a SIGTERM/SIGINT this script did not send (on a shared machine,
            # someone's `pkill`): not the daemon's fault. The caller runs the repetition again.
            say "   the daemon was stopped by a signal from outside during the $mode run; repeating it"
            STOPPED_FROM_OUTSIDE=1
            rm -rf "$dir"
            return 0
        fi
        mkdir -p "$(dirname "$OUT")"
        cp "$dir/daemon.log" "$(dirname "$OUT")/daemon-died.log"
        say "bench: the daemon exited during the $mode run (status $crashed$( [ "$crashed" -gt 128 ] && echo ", signal $((crashed - 128))")); its log is in $(dirname "$OUT")/daemon-died.log:"
        tail -5 "$dir/daemon.log" >&2
        say "bench: the client saw: $(cat "$dir/client.json")"
        exit 1
    fi
    kill -TERM "$DAEMON_PID" 2>/dev/null || true
    local stopped=0 start_stop=$SECONDS
    for _ in $(seq 150); do
        if ! kill -0 "$DAEMON_PID" 2>/dev/null; then stopped=1; break; fi
        sleep 0.1
    done
    if [ "$stopped" != 1 ]; then
        say "bench: the daemon did not stop within 15 s of SIGTERM; killing it"
        kill -KILL "$DAEMON_PID" 2>/dev/null || true
    fi
    local status=0
    wait "$DAEMON_PID" || status=$?
    DAEMON_PID=""
    count_rows "$dir/bridge.sqlite" >"$dir/rows.json"

    python3 - "$dir" "$mode" "$index" "$background" "$cpu_ticks" "$status" "$stopped" "$((SECONDS - start_stop))" \
        "$(getconf CLK_TCK)" >>"$RESULTS" <<'EOF'
import json, sys
d, mode, index, background, ticks, status, stopped, stop_s, hz = sys.argv[1:]
client = json.load(open(f"{d}/client.json"))
rows = json.load(open(f"{d}/rows.json"))
log_lines = sum(1 for _ in open(f"{d}/daemon.log", errors="replace"))
client.update(repetition=int(index), busy_before_pct=float(background), daemon_cpu_s_total=int(ticks) / int(hz),
              daemon_exit_status=int(status), daemon_stopped_on_sigterm=stopped == "1", stop_s=int(stop_s),
              database=rows, daemon_log_lines=log_lines)
# Every 202 must have its row, and no row may exist beyond what was sent. Requests that got no
# answer (connection error, still unanswered when the drain limit ran out) may or may not have
# been committed: they widen the upper bound only.
in_doubt = client["connection_errors"] + client["abandoned"]
client.update(in_doubt=in_doubt, exact=rows["rows"] == client["ok_total"],
              durable=client["ok_total"] <= rows["rows"] <= client["ok_total"] + in_doubt)
print(json.dumps(client))
EOF
    python3 - "$RESULTS" <<'EOF' >&2
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][-1]
lat = r["latency_ms"]
ms = lambda v: "n/a" if v is None else f"{v:.2f} ms"
relation = "=" if r["exact"] else "<=" if r["durable"] else "!="
doubt = "" if r["exact"] else f" (+{r['in_doubt']} unanswered)" if r["durable"] else "  MISMATCH"
line = (f"   {r['mode']:6} #{r['repetition']}: {r['throughput_rps']:8.1f} deliveries/s  "
        f"median {ms(lat['median'])}  p99 {ms(lat['p99'])}  "
        f"202s {r['ok_total']} {relation} rows {r['database']['rows']}{doubt}  "
        f"daemon {r.get('daemon_cpu_pct', 0):.0f}% cpu, client {r['client_cpu_pct']:.0f}%, machine {r.get('machine_busy_pct', 0):.0f}% busy")
non = {k: v for k, v in r["status_counts"].items() if k != "202"}
if non or r["connection_errors"] or r["abandoned"]:
    line += f"  non-202: {non} connection errors: {r['connection_errors']} unanswered: {r['abandoned']}"
print(line)
EOF
    [ "${BENCH_KEEP:-0}" = 1 ] || rm -f "$dir"/bridge.sqlite*
}

say "== $RUNS x throughput (closed loop, $CONNECTIONS connections, ${WARMUP}s warm-up + ${DURATION}s)" \
    "and $RUNS x latency (open loop at $RATE/s, ${WARMUP}s warm-up + ${DURATION}s), alternating"
# A repetition whose daemon was stopped from outside is run again, at most twice.
run_repetition() {
    local attempt
    for attempt in 1 2 3; do
        STOPPED_FROM_OUTSIDE=0
        repetition "$@"
        [ "$STOPPED_FROM_OUTSIDE" = 1 ] || return 0
    done
    say "bench: the daemon was stopped from outside three times in a row; giving up"
    exit 1
}
for i in $(seq "$RUNS"); do
    run_repetition closed "$i"
    run_repetition open "$i"
done

mkdir -p "$(dirname "$OUT")"
python3 "$ROOT/bench/report.py" --results "$RESULTS" --pool "$WORK/pool.json" --binary "$BIN" --root "$ROOT" \
    --out "$OUT" --rate "$RATE"
