#!/usr/bin/env python3
"""`make bench-scale`: the daemon with a year of history. See bench/README.md ("make bench-scale").

Fills (or reuses) a database with N finished runs through the daemon's own store path
(scale-fill), then measures on a copy of it, each figure the median of BENCH_SCALE_REPS runs:

  start     `pushward-bridge serve` to /readyz answering 200, VmRSS right after, and to the 202
            of the first delivery (a new run's) sent then
  reads     `pushward-bridge runs list`, GET / (status page), GET /api/runs (median of 7 each)
  soak      VmRSS during BENCH_SCALE_SOAK s at a fixed 200 deliveries/s: start, end, max, drift
            from the start, and drift once warm (from BENCH_SCALE_WARM s into the load, when the
            work in flight at that rate is built: runs within their grace minute, cards, history)
  latency   ack p99 at a fixed 1,000/s (bench/client.c, open loop) on the filled and on an empty
            database, alternating; the ratio of the medians
  simulate  BENCH_SCALE_SIM_PER_DAY runs a day for BENCH_SCALE_SIM_DAYS simulated days through the
            same fill path, retention called as the daemon calls it; database size per day

`make bench-scale-soak` runs the long soak instead: one daemon whose dispatcher sends to the
in-repo fake PushWard, BENCH_SCALE_SOAK (3600) s at 200/s, RSS, WAL and database size every
BENCH_SCALE_SAMPLE (60) s into .build/bench/scale-soak.csv, drawn into bench/scale-soak.svg.

Settings (environment), defaults in brackets:
  BENCH_SCALE_RUNS        runs in the filled database [1000000]
  BENCH_SCALE_DB          where the filled database is kept for later runs
                          [.build/bench/scale-<RUNS>.sqlite]
  BENCH_SCALE_REPOS       repositories the runs spread over [300]
  BENCH_SCALE_DAYS        days the runs spread over, ending now [90]
  BENCH_SCALE_PRUNE_EVERY simulated seconds between the fill's retention passes [600, the
                          daemon's cadence]; 0 never prunes
  BENCH_SCALE_COPY        1: measure on a copy, so the kept database stays as filled [1]
  BENCH_SCALE_REPS        repetitions of each figure [3]
  BENCH_SCALE_SOAK        soak seconds [600; 3600 for bench-scale-soak]
  BENCH_SCALE_SOAK_RATE   soak deliveries/s [200]
  BENCH_SCALE_SAMPLE      seconds between soak samples [1; 60 for bench-scale-soak]
  BENCH_SCALE_RATE        latency: fixed rate, deliveries/s [1000]
  BENCH_SCALE_DURATION    latency: measured seconds after 2 s of warm-up [30]
  BENCH_SCALE_IDS         latency: X-GitHub-Delivery shape, github (time-based, as GitHub's) or
                          random (scattered over the whole index, a worst case) [github]
  BENCH_SCALE_SETTLE      latency: seconds between /readyz and the load, for the start's own
                          work (the dispatcher's first turn over every live card) to finish [5]
  BENCH_SCALE_SIM_DAYS    simulated days [90]
  BENCH_SCALE_SIM_PER_DAY runs per simulated day [10000]; 0 skips the simulation
  BENCH_SCALE_ONLY        parts to run, comma-separated [fill,start,reads,soak,latency,simulate]
                          (long-soak: what bench-scale-soak runs)
  BENCH_SCALE_FAKE        1: the soak's dispatcher sends to the fake PushWard [0; 1 for long-soak]
  BENCH_SCALE_OUT         JSON summary [.build/bench/scale.json]
  BENCH_BIN_DIR           the release binaries [.build/release]
  BENCH_KEEP              1: keep the temporary directory (configs, copies, logs)

Nothing here asserts a threshold: figures are reported. The fill runs under `nice`.
"""

import hashlib
import hmac
import http.client
import importlib.util
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = os.environ


def setting(name, default):
    value = ENV.get(name, "")
    return type(default)(value) if value != "" else default


PARTS_DEFAULT = "fill,start,reads,soak,latency,simulate"
PARTS = set(setting("BENCH_SCALE_ONLY", PARTS_DEFAULT).split(","))
LONG = "long-soak" in PARTS
RUNS = setting("BENCH_SCALE_RUNS", 1_000_000)
DB = Path(setting("BENCH_SCALE_DB", str(ROOT / ".build" / "bench" / f"scale-{RUNS}.sqlite")))
REPOS = setting("BENCH_SCALE_REPOS", 300)
DAYS = setting("BENCH_SCALE_DAYS", 90.0)
COPY = setting("BENCH_SCALE_COPY", 1) == 1
PRUNE_EVERY = setting("BENCH_SCALE_PRUNE_EVERY", 600.0)
REPS = setting("BENCH_SCALE_REPS", 3)
SOAK = setting("BENCH_SCALE_SOAK", 3600 if LONG else 600)
SOAK_RATE = setting("BENCH_SCALE_SOAK_RATE", 200.0)
SAMPLE = setting("BENCH_SCALE_SAMPLE", 60.0 if LONG else 1.0)
WARM = setting("BENCH_SCALE_WARM", 120.0)
RATE = setting("BENCH_SCALE_RATE", 1000)
DURATION = setting("BENCH_SCALE_DURATION", 30)
IDS = ENV.get("BENCH_SCALE_IDS", "github")
SETTLE = setting("BENCH_SCALE_SETTLE", 5.0)
SIM_DAYS = setting("BENCH_SCALE_SIM_DAYS", 90)
SIM_PER_DAY = setting("BENCH_SCALE_SIM_PER_DAY", 10_000)
FAKE = setting("BENCH_SCALE_FAKE", 1 if LONG else 0) == 1
OUT = Path(setting("BENCH_SCALE_OUT", str(ROOT / ".build" / "bench" / "scale.json")))
BIN = Path(setting("BENCH_BIN_DIR", str(ROOT / ".build" / "release")))
KEEP = setting("BENCH_KEEP", 0) == 1
SECRET = f"scale-secret-{os.getpid()}"
API_KEY = "hlk_bench"

spec = importlib.util.spec_from_file_location("gen", ROOT / "bench" / "gen.py")
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)


def say(*parts):
    print(*parts, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kb(pid, field="VmRSS"):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def disk_io(pid):
    """(bytes read from disk, bytes written) by the process so far, from /proc/PID/io; page-cache
    hits are not reads, and writes count when they reach the block layer's queue."""
    fields = {}
    with open(f"/proc/{pid}/io") as io:
        for line in io:
            name, _, value = line.partition(":")
            fields[name] = int(value)
    return fields["read_bytes"], fields["write_bytes"]


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def get(port, path, timeout=30):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


class Daemon:
    """`pushward-bridge serve` on a generated configuration (dry-run, or the fake PushWard)."""

    def __init__(self, work, database, pushward_port=None, name="daemon"):
        self.port = free_port()
        self.admin = free_port()
        self.log_path = work / f"{name}.log"
        pushward = {"api_key": ""}
        if pushward_port:
            pushward = {"url": f"http://127.0.0.1:{pushward_port}", "api_key": API_KEY}
        config = {
            "listen": f"127.0.0.1:{self.port}",
            "admin_listen": f"127.0.0.1:{self.admin}",
            "database": str(database),
            "github": {"webhook_secrets": [SECRET]},
            "pushward": pushward,
        }
        self.config = work / f"{name}.json"
        self.config.write_text(json.dumps(config))
        # PUSHWARD_* variables of the caller must not redirect the benchmark.
        self.env = {k: v for k, v in ENV.items() if not k.startswith("PUSHWARD_") and k != "CREDENTIALS_DIRECTORY"}
        self.process = None

    def start(self, limit=600):
        """Starts the daemon; returns seconds to the first 200 from /readyz."""
        log = open(self.log_path, "ab")
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [str(BIN / "pushward-bridge"), "serve", "--config", str(self.config)],
            stdout=log, stderr=log, env=self.env)
        while time.perf_counter() - started < limit:
            if self.process.poll() is not None:
                raise SystemExit(f"bench-scale: the daemon exited at start; see {self.log_path}")
            try:
                if get(self.port, "/readyz", timeout=1) == 200:
                    return time.perf_counter() - started
            except OSError:
                pass
            time.sleep(0.005)
        raise SystemExit(f"bench-scale: no /readyz within {limit} s; see {self.log_path}")

    @property
    def rss_kb(self):
        return rss_kb(self.process.pid)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                say("   the daemon did not stop within 30 s of SIGTERM; killing it")
                self.process.kill()
                self.process.wait()
        self.process = None


class Sender(threading.Thread):
    """Signed deliveries at a fixed rate over one keep-alive connection, generated as they are
    sent (gen.py's shapes: 11 per run over 3 jobs), so an hour at 200/s needs no 7 GB pool.
    Open loop: a late answer delays the next send, and the achieved rate is reported."""

    def __init__(self, port, rate, seconds, first_run):
        super().__init__(daemon=True)
        self.port, self.rate, self.seconds, self.first_run = port, rate, seconds, first_run
        self.sent = 0
        self.statuses = {}
        self.errors = 0
        self.elapsed = 0.0
        self.stop_requested = False

    def deliveries(self):
        shapes = gen.templates()
        secret = SECRET.encode()
        run = self.first_run
        while True:
            for event, shape, fields, delivery in gen.run_deliveries(run, REPOS):
                body = gen.fill(shapes[shape], fields).encode()
                signature = hmac.new(secret, body, hashlib.sha256).hexdigest()
                yield body, {
                    "X-GitHub-Delivery": delivery, "X-GitHub-Event": event, "X-GitHub-Hook-ID": "424242",
                    "X-Hub-Signature-256": f"sha256={signature}", "Content-Type": "application/json",
                }
            run += 1

    def run(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        source = self.deliveries()
        start = time.perf_counter()
        while not self.stop_requested:
            due = start + self.sent / self.rate
            if due - start >= self.seconds:
                break
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            body, headers = next(source)
            try:
                connection.request("POST", "/webhook", body=body, headers=headers)
                response = connection.getresponse()
                response.read()
                self.statuses[response.status] = self.statuses.get(response.status, 0) + 1
            except (OSError, http.client.HTTPException):
                self.errors += 1
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self.sent += 1
        self.elapsed = time.perf_counter() - start
        connection.close()


def fill(work):
    """The kept database with RUNS runs: reused when its meta file says so, else filled anew."""
    meta_path = Path(str(DB) + ".meta.json")
    wanted = {"runs": RUNS, "repos": REPOS, "days": DAYS, "prune_every": PRUNE_EVERY}
    if DB.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if all(meta.get(k) == v for k, v in wanted.items()):
            age = (time.time() - meta["summary"]["end"]) / 86_400
            say(f"== fill: reusing {DB} ({RUNS} runs, filled {age:.1f} days ago)")
            return meta
    for suffix in ("", "-wal", "-shm", ".meta.json"):
        Path(str(DB) + suffix).unlink(missing_ok=True)
    DB.parent.mkdir(parents=True, exist_ok=True)
    templates = work / "templates.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen.py"), "--scale-templates", str(templates)], check=True)
    say(f"== fill: {RUNS} runs over {DAYS:g} days and {REPOS} repositories into {DB} (nice; scale-fill)")
    result = subprocess.run(
        ["nice", "-n", "10", str(BIN / "scale-fill"), "--database", str(DB), "--templates", str(templates),
         "--runs", str(RUNS), "--days", str(DAYS), "--repos", str(REPOS), "--prune-every", str(PRUNE_EVERY)],
        check=True, stdout=subprocess.PIPE, text=True)
    summary = json.loads(result.stdout)
    say(f"   {summary['runs_per_second']:.0f} runs/s, {summary['deliveries_per_second']:.0f} deliveries/s "
        f"({summary['seconds']:.0f} s); statuses {summary['statuses']}; "
        f"database {summary['database_bytes'] / 1e6:.0f} MB; fill process peak RSS "
        f"{summary['max_resident_kb'] / 1024:.0f} MB")
    meta = dict(wanted, summary=summary)
    meta_path.write_text(json.dumps(meta))
    return meta


def working_copy(work):
    if not COPY:
        return DB
    copy = work / "filled.sqlite"
    started = time.perf_counter()
    subprocess.run(["cp", "--reflink=auto", str(DB), str(copy)], check=True)
    say(f"   working copy in {time.perf_counter() - started:.1f} s ({file_size(copy) / 1e6:.0f} MB)")
    settle_writeback("the working copy")
    return copy


def dirty_kb():
    """Page cache not yet on disk (Dirty + Writeback in /proc/meminfo), in kB."""
    total = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith(("Dirty:", "Writeback:")):
                total += int(line.split()[1])
    except OSError:
        return 0
    return total


def settle_writeback(what):
    """Flushes the page cache before a measurement. Copying a 14 GB file leaves gigabytes dirty
    (vm.dirty_ratio lets 20 % of memory be), which the kernel writes back for tens of seconds
    after `cp` returns; a daemon measured then waits for every fsync and journal commit behind
    that writeback, which no daemon in service does. The time the flush took is reported."""
    started = time.perf_counter()
    before = dirty_kb()
    os.sync()
    while dirty_kb() > 16 * 1024 and time.perf_counter() - started < 300:
        time.sleep(0.2)
    say(f"   flushed {before / 1024:.0f} MB of dirty page cache after {what} in "
        f"{time.perf_counter() - started:.1f} s")


def measure_start(work, database):
    say(f"== start: serve to /readyz 200, and VmRSS right after ({REPS} runs)")
    runs = []
    for index in range(REPS):
        daemon = Daemon(work, database, name=f"start-{index}")
        try:
            launched = time.perf_counter()
            seconds = daemon.start()
            rss = daemon.rss_kb
            # The first delivery after the start, a new run's first: answered (202 = committed) when?
            body, headers = next(Sender(daemon.port, 1, 1, first_run=random.randrange(10**8)).deliveries())
            connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
            connection.request("POST", "/webhook", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            first = time.perf_counter() - launched
            if response.status != 202:
                raise SystemExit(f"bench-scale: the first delivery got {response.status}; see {daemon.log_path}")
        finally:
            daemon.stop()
        runs.append({"seconds": seconds, "rss_kb": rss, "first_delivery_s": first})
        say(f"   #{index + 1}: ready {seconds * 1000:.0f} ms, first delivery answered {first * 1000:.0f} ms, "
            f"{rss / 1024:.1f} MB")
    return {"ready_s": median([r["seconds"] for r in runs]), "rss_kb": median([r["rss_kb"] for r in runs]),
            "first_delivery_s": median([r["first_delivery_s"] for r in runs]), "runs": runs}


def measure_reads(work, database):
    say("== reads: runs list (CLI), GET / (status page), GET /api/runs; median of 7 each")
    daemon = Daemon(work, database, name="reads")
    figures = {}
    try:
        daemon.start()
        cli = [str(BIN / "pushward-bridge"), "runs", "list", "--database", str(database)]

        def timed(action):
            times = []
            for _ in range(7):
                started = time.perf_counter()
                action()
                times.append(time.perf_counter() - started)
            return {"median_ms": median(times) * 1000, "runs_ms": [t * 1000 for t in times]}

        figures["runs_list_cli"] = timed(lambda: subprocess.run(cli, check=True, stdout=subprocess.DEVNULL))
        # What the process costs without any query: the CLI's own start, to read the figure above by.
        figures["cli_version"] = timed(
            lambda: subprocess.run([str(BIN / "pushward-bridge"), "version"], stdout=subprocess.DEVNULL))
        for name, path in (("status_page", "/"), ("api_runs", "/api/runs")):
            figures[name] = timed(lambda: get(daemon.admin, path) == 200 or sys.exit(f"GET {path} failed"))
    finally:
        daemon.stop()
    for name, figure in figures.items():
        say(f"   {name}: {figure['median_ms']:.1f} ms")
    return figures


def soak_once(work, database, index, pushward_port=None, csv_path=None):
    daemon = Daemon(work, database, pushward_port=pushward_port, name=f"soak-{index}")
    daemon.start()
    wal = Path(str(database) + "-wal")
    samples = [(0.0, daemon.rss_kb, file_size(wal), file_size(database))]
    sender = Sender(daemon.port, SOAK_RATE, SOAK, first_run=random.randrange(10**8))
    started = time.perf_counter()
    sender.start()
    try:
        while sender.is_alive():
            sender.join(SAMPLE)
            samples.append((time.perf_counter() - started, daemon.rss_kb, file_size(wal), file_size(database)))
            if csv_path and len(samples) % max(1, int(300 / SAMPLE)) == 0:
                say(f"   {samples[-1][0]:.0f} s: RSS {samples[-1][1] / 1024:.1f} MB, "
                    f"WAL {samples[-1][2] / 1e6:.1f} MB, database {samples[-1][3] / 1e6:.0f} MB")
    finally:
        sender.stop_requested = True
        sender.join()
        daemon.stop()
    if csv_path:
        with open(csv_path, "w") as out:
            out.write("seconds,rss_kb,wal_bytes,database_bytes\n")
            for sample in samples:
                out.write(",".join(str(round(v, 1)) if isinstance(v, float) else str(v) for v in sample) + "\n")
    rss = [s[1] for s in samples if s[1]]
    # None when the soak is shorter than BENCH_SCALE_WARM: there is no warm figure to drift from.
    warm = next((s[1] for s in samples if s[0] >= WARM and s[1]), None)
    result = {
        "rss_start_kb": rss[0], "rss_end_kb": rss[-1], "rss_max_kb": max(rss),
        "drift_pct": 100.0 * (rss[-1] - rss[0]) / rss[0],
        "rss_warm_kb": warm, "warm_drift_pct": 100.0 * (rss[-1] - warm) / warm if warm else None,
        "sent": sender.sent, "achieved_rate": sender.sent / max(sender.elapsed, 1e-9),
        "statuses": {str(k): v for k, v in sender.statuses.items()}, "errors": sender.errors,
        "wal_max_bytes": max(s[2] for s in samples), "database_end_bytes": samples[-1][3],
    }
    say(f"   #{index + 1}: RSS {result['rss_start_kb'] / 1024:.1f} -> {result['rss_end_kb'] / 1024:.1f} MB "
        f"(max {result['rss_max_kb'] / 1024:.1f}, drift {result['drift_pct']:+.1f} %; {warm_text(result)}), "
        f"{result['achieved_rate']:.0f}/s, statuses {result['statuses']}, errors {result['errors']}")
    return result


def warm_text(result):
    """The warm figure and the drift from it, or why there is none."""
    if result.get("rss_warm_kb") is None or result.get("warm_drift_pct") is None:
        return f"no warm figure: the soak is shorter than BENCH_SCALE_WARM ({WARM:g} s)"
    return f"{result['rss_warm_kb'] / 1024:.1f} MB at {WARM:g} s, {result['warm_drift_pct']:+.1f} % from there"


def measure_soak(work, database, fake_port):
    say(f"== soak: {SOAK} s at {SOAK_RATE:g} deliveries/s, VmRSS every {SAMPLE:g} s ({REPS} runs)")
    runs = [soak_once(work, database, index, fake_port) for index in range(REPS)]
    keys = ("rss_start_kb", "rss_end_kb", "rss_max_kb", "drift_pct", "rss_warm_kb", "warm_drift_pct")
    return dict({k: median([r[k] for r in runs]) for k in keys}, runs=runs)


# The tables holding a repository's runs, deliveries, cards and what was sent, and their column.
LATENCY_TABLES = (("deliveries", "repository"), ("jobs", "repository"), ("runs", "repository"),
                  ("step_history", "repository"), ("pushes", "repository"), ("activities", "owner_repository"),
                  ("alerts", "repository"), ("actions", "repository"), ("action_tokens", "repository"))


def forget_latency_rows(database, prefix="latency-"):
    """Deletes what latency repetitions wrote to the filled database (their owners start with
    `prefix`; the fill's are `scale-org`), so each repetition starts from the filled state and not
    from the runs and cards earlier ones left in flight: a load cut off after 30 s leaves about 300
    runs and 300 cards not finished, which the next start loads as work in flight. Without this the
    filled side held 25 times the empty side's work in flight after 20 repetitions (7,767 runs,
    7,368 cards). The pages the rows filled are given back to the file (`incremental_vacuum`), so the
    next start does not find them on its free list, which the daemon would then vacuum, and new rows
    would be scattered over, while it is measured. Returns the rows deleted."""
    low, high = prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)
    deleted = 0
    connection = sqlite3.connect(database, timeout=60)
    try:
        free_before = connection.execute("PRAGMA freelist_count").fetchone()[0]
        with connection:
            for table, column in LATENCY_TABLES:
                cursor = connection.execute(f"DELETE FROM {table} WHERE {column} >= ? AND {column} < ?", (low, high))
                deleted += cursor.rowcount
        freed = connection.execute("PRAGMA freelist_count").fetchone()[0] - free_before
        if freed > 0:
            connection.executescript(f"PRAGMA incremental_vacuum({freed});")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        connection.close()
    return deleted


def measure_latency(work, database):
    say(f"== latency: ack at a fixed {RATE}/s (client.c, open loop), filled vs empty, alternating ({REPS} each), "
        f"{IDS} delivery ids")
    client = work / "client"
    subprocess.run([ENV.get("CC", "gcc"), "-O2", "-o", str(client), str(ROOT / "bench" / "client.c"), "-lm"],
                   check=True)
    count = int(RATE * (DURATION + 2) * 1.2) + 1000
    base = random.randrange(10**8)
    say(f"   deleted {forget_latency_rows(database)} rows that earlier latency runs left in the filled database")
    results = {"filled": [], "empty": []}
    for index in range(REPS):
        pool = work / f"pool-{index}.bin"
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "gen.py"), "--out", str(pool), "--count", str(count), "--secret",
             SECRET, "--repos", str(REPOS), "--org", f"latency-{os.getpid()}-{index}",
             "--first-run", str(base + index * count), "--delivery-ids", IDS],
            check=True, stdout=subprocess.DEVNULL)
        empty = work / f"empty-{index}.sqlite"
        for kind, path in (("filled", database), ("empty", empty)):
            # Both sides start from a page cache with nothing left to write back (the previous
            # repetition's WAL, the pool just generated).
            settle_writeback(f"latency {kind} #{index + 1}'s set-up")
            daemon = Daemon(work, path, name=f"latency-{kind}-{index}")
            try:
                daemon.start()
                time.sleep(SETTLE)
                output = subprocess.run(
                    [str(client), "--pool", str(pool), "--port", str(daemon.port), "--mode", "open", "--rate",
                     str(RATE), "--connections", "32", "--warmup", "2", "--duration", str(DURATION),
                     "--drain", "30", "--pid", str(daemon.process.pid)],
                    check=True, stdout=subprocess.PIPE, text=True).stdout
                read_bytes, written_bytes = disk_io(daemon.process.pid)
            finally:
                daemon.stop()
            if kind == "filled":
                forget_latency_rows(database)
            run = json.loads(output)
            run["disk_read_bytes"], run["disk_written_bytes"] = read_bytes, written_bytes
            results[kind].append(run)
            latency = run["latency_ms"]
            say(f"   {kind:6} #{index + 1}: p50 {latency['median']:.2f} ms, p99 {latency['p99']:.2f} ms, "
                f"max {latency['max']:.1f} ms, {run['throughput_rps']:.0f}/s; the daemon read "
                f"{read_bytes / 1e6:.0f} MB from disk and wrote {written_bytes / 1e6:.0f} MB")
        for suffix in ("", "-wal", "-shm"):
            Path(str(empty) + suffix).unlink(missing_ok=True)
        pool.unlink()
    p99 = {kind: median([r["latency_ms"]["p99"] for r in runs]) for kind, runs in results.items()}
    return {"p99_filled_ms": p99["filled"], "p99_empty_ms": p99["empty"],
            "ratio": p99["filled"] / p99["empty"] if p99["empty"] else None, "runs": results}


def simulate(work):
    runs = SIM_DAYS * SIM_PER_DAY
    say(f"== simulate: {SIM_PER_DAY} runs/day for {SIM_DAYS} simulated days ({runs} runs; nice; scale-fill)")
    templates = work / "templates.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen.py"), "--scale-templates", str(templates)], check=True)
    csv_path = OUT.parent / "scale-days.csv"
    database = work / "simulated.sqlite"
    result = subprocess.run(
        ["nice", "-n", "10", str(BIN / "scale-fill"), "--database", str(database), "--templates", str(templates),
         "--runs", str(runs), "--days", str(SIM_DAYS), "--repos", str(REPOS), "--prune-every", str(PRUNE_EVERY),
         "--sizes-csv", str(csv_path)],
        check=True, stdout=subprocess.PIPE, text=True)
    summary = json.loads(result.stdout)
    days = summary["days"]
    shown = days[:: max(1, len(days) // 10)]
    for day in shown + ([days[-1]] if days[-1] is not shown[-1] else []):
        say(f"   day {day['day']:3}: {day['runs']} runs, database {day['database_bytes'] / 1e6:.0f} MB "
            f"+ WAL {day['wal_bytes'] / 1e6:.1f} MB")
    final = days[-1]["database_bytes"] + days[-1]["wal_bytes"]
    say(f"   final: {final / 1e6:.0f} MB (file + WAL); per-day table in {csv_path}")
    for suffix in ("", "-wal", "-shm"):
        Path(str(database) + suffix).unlink(missing_ok=True)
    return {"runs_per_day": SIM_PER_DAY, "days": SIM_DAYS, "final_bytes": final, "csv": str(csv_path),
            "fill": {k: v for k, v in summary.items() if k != "days"}, "per_day": days}


class FakePushWard:
    """bench's fake PushWard (fake-pushward, the tests' FakePushWardServer) on a loopback port."""

    def __enter__(self):
        self.process = subprocess.Popen([str(BIN / "fake-pushward"), "--api-key", API_KEY], stdout=subprocess.PIPE,
                                        text=True)
        self.port = json.loads(self.process.stdout.readline())["port"]
        return self

    def __exit__(self, *_):
        self.process.send_signal(signal.SIGTERM)
        line = self.process.stdout.readline()
        self.process.wait(30)
        self.totals = json.loads(line) if line.strip() else {}
        say(f"   fake PushWard: {self.totals}")


def main():
    for name in ("pushward-bridge", "scale-fill", "fake-pushward"):
        if not (BIN / name).exists():
            raise SystemExit(f"bench-scale: no {BIN / name} (run: swift build -c release)")
    work = Path(tempfile.mkdtemp(prefix="pushward-scale."))
    report = {"settings": {"runs": RUNS, "repos": REPOS, "days": DAYS, "reps": REPS, "soak_s": SOAK, "ids": IDS,
                           "soak_rate": SOAK_RATE, "rate": RATE, "parts": sorted(PARTS), "fake_pushward": FAKE},
              "machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()}}
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                                text=True).stdout.strip()
        report["commit"] = commit
        if LONG:
            # On (a copy of) the filled database, as in production after a year.
            report["fill"] = fill(work)
            database = working_copy(work)
            say(f"== long soak: {SOAK} s at {SOAK_RATE:g}/s, dispatcher to the fake PushWard, sample every "
                f"{SAMPLE:g} s")
            csv_path = OUT.parent / "scale-soak.csv"
            OUT.parent.mkdir(parents=True, exist_ok=True)
            with FakePushWard() as fake:
                report["long_soak"] = soak_once(work, database, 0, fake.port, csv_path=csv_path)
            report["long_soak"]["fake_pushward"] = fake.totals
            report["long_soak"]["csv"] = str(csv_path)
            svg = ROOT / "bench" / "scale-soak.svg"
            caption = f"N = {RUNS} runs stored, {SOAK_RATE:g} deliveries/s, fake PushWard, commit {commit}"
            subprocess.run(
                [sys.executable, str(ROOT / "bench" / "plot_soak.py"), str(csv_path), str(svg), caption], check=True)
            say(f"   plot: {svg}")
        else:
            if PARTS & {"fill", "start", "reads", "soak", "latency"}:
                report["fill"] = fill(work)
                database = working_copy(work)
            if "start" in PARTS:
                report["start"] = measure_start(work, database)
            if "reads" in PARTS:
                report["reads"] = measure_reads(work, database)
            # Latency before the soak: the soak adds 120,000 deliveries a run (of an owner the latency
            # clean-up does not remove), and the filled database is to be measured as filled.
            if "latency" in PARTS:
                report["latency"] = measure_latency(work, database)
            if "soak" in PARTS:
                if FAKE:
                    with FakePushWard() as fake:
                        report["soak"] = measure_soak(work, database, fake.port)
                else:
                    report["soak"] = measure_soak(work, database, None)
            if "simulate" in PARTS and SIM_PER_DAY > 0:
                report["simulate"] = simulate(work)
    finally:
        if KEEP:
            say(f"bench-scale: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=1))
    summarise(report)


def summarise(report):
    say(f"== summary ({'one run' if LONG else f'medians of {REPS}'}; N = {RUNS} runs), written to {OUT}")
    if "start" in report:
        s = report["start"]
        say(f"   start to /readyz      {s['ready_s'] * 1000:8.0f} ms      RSS after start {s['rss_kb'] / 1024:.1f} MB")
        say(f"   start to first 202    {s['first_delivery_s'] * 1000:8.0f} ms")
    if "soak" in report:
        s = report["soak"]
        say(f"   soak {SOAK} s at {SOAK_RATE:g}/s  RSS start {s['rss_start_kb'] / 1024:.1f} MB, end "
            f"{s['rss_end_kb'] / 1024:.1f} MB, max {s['rss_max_kb'] / 1024:.1f} MB, drift {s['drift_pct']:+.1f} %; "
            f"{warm_text(s)}")
    if "latency" in report:
        s = report["latency"]
        ratio = f"{s['ratio']:.2f}" if s["ratio"] else "n/a"
        say(f"   ack p99 at {RATE}/s      filled {s['p99_filled_ms']:.2f} ms, empty {s['p99_empty_ms']:.2f} ms, "
            f"ratio {ratio}")
    if "reads" in report:
        r = report["reads"]
        say(f"   runs list (CLI)       {r['runs_list_cli']['median_ms']:8.1f} ms  (CLI start alone "
            f"{r['cli_version']['median_ms']:.1f} ms)")
        say(f"   GET / (status page)   {r['status_page']['median_ms']:8.1f} ms")
        say(f"   GET /api/runs         {r['api_runs']['median_ms']:8.1f} ms")
    if "simulate" in report:
        s = report["simulate"]
        say(f"   {s['days']} simulated days at {s['runs_per_day']}/day: database + WAL {s['final_bytes'] / 1e6:.0f} MB")
    if "long_soak" in report:
        s = report["long_soak"]
        say(f"   long soak: RSS {s['rss_start_kb'] / 1024:.1f} -> {s['rss_end_kb'] / 1024:.1f} MB "
            f"(max {s['rss_max_kb'] / 1024:.1f}, drift {s['drift_pct']:+.1f} %; {warm_text(s)}), WAL max "
            f"{s['wal_max_bytes'] / 1e6:.1f} MB, database {s['database_end_bytes'] / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
