#!/usr/bin/env python3
"""bench/ha.py — the PostgreSQL figures of `make bench` (README, "High availability").

A throwaway PostgreSQL from Debian's packages (initdb into a temporary directory, 127.0.0.1 and a
free port, durable: fsync and synchronous_commit on, as a production server), then, each a median
of BENCH_HA_RUNS (3) repetitions on a fresh database:

  ingest     closed loop (bench/client.c, BENCH_HA_CONNECTIONS in all) against one instance, and
             against two on the same database (half the connections each, disjoint pools):
             deliveries/s committed, every 202 checked against its row
  latency    open loop at BENCH_HA_RATE (1000) deliveries/s in all, one and two instances: ack p99
             (with two instances, the larger of the two clients' p99s, which bounds the p99 of all
             answers), and how long the leader took to apply the followers' backlog afterwards
  failover   two instances sending to the in-repo fake PushWard, 200 deliveries/s to the follower,
             the leader SIGKILLed: time to the lead taken over and to the first request the new
             leader had answered (its pushward_requests_total moving)

Writes .build/bench/ha.json. Needs `postgresql` (Debian) and the release build (`make bench`).

Settings (environment): BENCH_BIN_DIR, BENCH_HA_RUNS (3), BENCH_HA_DURATION (10), BENCH_HA_WARMUP
(2), BENCH_HA_CONNECTIONS (16), BENCH_HA_RATE (1000), BENCH_HA_POOL (60000 per client),
BENCH_HA_OUT, BENCH_HA_KEEP (1: keep the work directory).
"""

import glob
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = pathlib.Path(os.environ.get("BENCH_BIN_DIR", ROOT / ".build/release"))
RUNS = int(os.environ.get("BENCH_HA_RUNS", 3))
DURATION = int(os.environ.get("BENCH_HA_DURATION", 10))
WARMUP = int(os.environ.get("BENCH_HA_WARMUP", 2))
CONNECTIONS = int(os.environ.get("BENCH_HA_CONNECTIONS", 16))
RATE = int(os.environ.get("BENCH_HA_RATE", 1000))
POOL = int(os.environ.get("BENCH_HA_POOL", 60000))
OUT = pathlib.Path(os.environ.get("BENCH_HA_OUT", ROOT / ".build/bench/ha.json"))
SECRET = f"bench-ha-secret-{os.getpid()}"
API_KEY = "hlk_bench"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("PUSHWARD_") and k != "CREDENTIALS_DIRECTORY"}


def say(*parts):
    print(*parts, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path, timeout=2):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as response:
        return response.status, response.read().decode()


class Postgres:
    """A PostgreSQL server in a temporary directory; as the `postgres` user when run as root."""

    def __init__(self, work):
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found:
            raise SystemExit("bench-ha: PostgreSQL is not installed (apt-get install postgresql)")
        self.bin = pathlib.Path(found[-1]).parent
        self.root = work / "pg"
        self.root.mkdir()
        self.data = self.root / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.root, "postgres")
            os.chmod(work, 0o755)
        self.run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.root} " \
            "-c max_connections=100 -c shared_buffers=256MB"
        self.run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "server.log"), "-w", "start")
        self.databases = 0

    def run(self, tool, *arguments):
        command = [str(self.bin / tool), *arguments]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def uri(self, name):
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def new_database(self):
        self.databases += 1
        name = f"bench_{self.databases}"
        subprocess.run(["psql", "-X", "-q", self.uri("postgres"), "-c", f"CREATE DATABASE {name}"], check=True)
        return self.uri(name)

    def query(self, uri, sql):
        return subprocess.run(["psql", "-X", "-q", "-t", "-A", uri, "-c", sql], check=True,
                              capture_output=True, text=True).stdout.strip()

    def stop(self):
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "stop")


class Instance:
    def __init__(self, work, name, uri, pushward_port=None):
        self.port, self.admin = free_port(), free_port()
        self.log = work / f"{name}.log"
        pushward = {"api_key": ""}
        if pushward_port:
            pushward = {"url": f"http://127.0.0.1:{pushward_port}", "api_key": API_KEY, "min_update_interval": "0s",
                        "fidelity": "full", "coalesce": "0s", "max_updates_per_hour": 3600}
        self.config = work / f"{name}.json"
        self.config.write_text(json.dumps({
            "listen": f"127.0.0.1:{self.port}", "admin_listen": f"127.0.0.1:{self.admin}", "database": uri,
            "github": {"webhook_secrets": [SECRET]}, "pushward": pushward}))
        self.process = subprocess.Popen([str(BIN / "pushward-bridge"), "serve", "--config", str(self.config)],
                                        stdout=subprocess.DEVNULL, stderr=open(self.log, "ab"), env=ENV)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"bench-ha: an instance exited at start; see {self.log}")
            try:
                if http_get(self.port, "/readyz", timeout=1)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.02)
        raise SystemExit(f"bench-ha: no /readyz within 60 s; see {self.log}")

    def metric(self, name):
        text = http_get(self.admin, "/metrics")[1]
        total = 0.0
        for line in text.splitlines():
            series = line.split(" ", 1)[0]
            if series == f"pushward_bridge_{name}" or series.startswith(f"pushward_bridge_{name}{{"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def client(work, pool, port, mode, connections, rate, duration=DURATION, warmup=WARMUP):
    arguments = [str(work / "client"), "--pool", str(pool), "--port", str(port), "--warmup", str(warmup),
                 "--duration", str(duration), "--drain", "20", "--mode", mode, "--connections", str(connections)]
    if mode == "open":
        arguments += ["--rate", str(rate)]
    return subprocess.Popen(arguments, stdout=subprocess.PIPE, text=True)


def load(work, pg, pools, instances, mode):
    """One repetition: `instances` daemons on a fresh database, one client each."""
    uri = pg.new_database()
    daemons = [Instance(work, f"{mode}-{instances}-{index}", uri) for index in range(instances)]
    clients = [client(work, pools[index], daemon.port, mode, max(1, CONNECTIONS // instances), RATE / instances)
               for index, daemon in enumerate(daemons)]
    results = [json.loads(c.communicate()[0]) for c in clients]
    # The followers' deliveries wait for the leader: how long it takes to have applied them all.
    started = time.time()
    while pg.query(uri, "SELECT count(*) FROM deliveries WHERE waiting") != "0" and time.time() - started < 120:
        time.sleep(0.05)
    backlog = time.time() - started
    for daemon in daemons:
        daemon.stop()
    ok = sum(r["ok_total"] for r in results)
    rows = int(pg.query(uri, "SELECT count(*) FROM deliveries"))
    doubt = sum(r["connection_errors"] + r["abandoned"] for r in results)
    return {
        "instances": instances, "mode": mode,
        "throughput_rps": sum(r["throughput_rps"] for r in results),
        "p99_ms": max(r["latency_ms"]["p99"] or 0 for r in results),
        "median_ms": max(r["latency_ms"]["median"] or 0 for r in results),
        "ok_total": ok, "rows": rows, "durable": ok <= rows <= ok + doubt,
        "status_counts": [r["status_counts"] for r in results], "backlog_applied_s": backlog,
    }


def failover(work, pg, pool):
    """Two instances and the fake PushWard; the leader SIGKILLed under 200 deliveries/s."""
    fake = subprocess.Popen([str(BIN / "fake-pushward"), "--api-key", API_KEY], stdout=subprocess.PIPE, text=True)
    fake_port = json.loads(fake.stdout.readline())["port"]
    uri = pg.new_database()
    first = Instance(work, "failover-a", uri, fake_port)
    time.sleep(1)
    second = Instance(work, "failover-b", uri, fake_port)
    leader, follower = (first, second) if first.metric("leader") == 1 else (second, first)
    sender = client(work, pool, follower.port, "open", 4, 200, duration=12, warmup=0)
    time.sleep(5)
    sent_before = follower.metric("pushward_requests_total")
    leader.process.send_signal(signal.SIGKILL)
    killed = time.time()
    took_over = answered = None
    while time.time() - killed < 30 and answered is None:
        if took_over is None and follower.metric("leader") == 1:
            took_over = time.time() - killed
        if follower.metric("pushward_requests_total") > sent_before:
            answered = time.time() - killed
        time.sleep(0.01)
    sender.communicate()
    follower.stop()
    leader.process.wait()
    fake.send_signal(signal.SIGTERM)
    totals = json.loads(fake.communicate()[0].strip().splitlines()[-1])
    return {"took_over_s": took_over, "first_request_s": answered, "fake_violations": totals["violations"]}


def seconds(value):
    """A duration for the report; `never` when the event was not seen within the wait."""
    return "never" if value is None else f"{value:.2f} s"


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main():
    for tool in ("pushward-bridge", "fake-pushward"):
        if not (BIN / tool).exists():
            raise SystemExit(f"bench-ha: no {BIN / tool} (run: swift build -c release)")
    work = pathlib.Path(tempfile.mkdtemp(prefix="pushward-bench-ha."))
    pg = None
    try:
        say("== PostgreSQL: one and two instances on one database (bench/ha.py)")
        pg = Postgres(work)
        cc = shutil.which("gcc") or shutil.which("cc")
        subprocess.run([cc, "-O2", "-o", str(work / "client"), str(ROOT / "bench/client.c"), "-lm"], check=True)
        pools = []
        for index in range(2):
            pool = work / f"pool-{index}.bin"
            subprocess.run([sys.executable, str(ROOT / "bench/gen.py"), "--out", str(pool), "--count", str(POOL),
                            "--secret", SECRET, "--first-run", str(index * 1_000_000)],
                           check=True, stdout=subprocess.DEVNULL)
            pools.append(pool)
        results = {"settings": {"runs": RUNS, "duration_s": DURATION, "connections": CONNECTIONS, "rate": RATE}}
        for instances in (1, 2):
            for mode in ("closed", "open"):
                repetitions = []
                for index in range(RUNS):
                    r = load(work, pg, pools, instances, mode)
                    repetitions.append(r)
                    say(f"   {instances} instance(s), {mode:6} #{index + 1}: {r['throughput_rps']:7.0f}/s  "
                        f"p99 {r['p99_ms']:.2f} ms  202s {r['ok_total']} rows {r['rows']} "
                        f"{'durable' if r['durable'] else 'MISMATCH'}  backlog applied in {r['backlog_applied_s']:.2f} s")
                results[f"{mode}_{instances}"] = {
                    "throughput_rps": median([r["throughput_rps"] for r in repetitions]),
                    "p99_ms": median([r["p99_ms"] for r in repetitions]),
                    "median_ms": median([r["median_ms"] for r in repetitions]),
                    "backlog_applied_s": median([r["backlog_applied_s"] for r in repetitions]),
                    "durable": all(r["durable"] for r in repetitions), "repetitions": repetitions,
                }
        failovers = []
        for index in range(RUNS):
            f = failover(work, pg, pools[0])
            failovers.append(f)
            say(f"   failover #{index + 1}: lead taken over {seconds(f['took_over_s'])}, first request answered "
                f"{seconds(f['first_request_s'])} after the SIGKILL; fake violations {f['fake_violations']}")
        results["failover"] = {
            "took_over_s": median([f["took_over_s"] for f in failovers]),
            "first_request_s": median([f["first_request_s"] for f in failovers]), "repetitions": failovers,
        }
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(results, indent=2))
        say("== medians")
        for key in ("closed_1", "closed_2", "open_1", "open_2"):
            r = results[key]
            say(f"   {key}: {r['throughput_rps']:.0f}/s, p99 {r['p99_ms']:.2f} ms, backlog {r['backlog_applied_s']:.2f} s")
        say(f"   failover: taken over {seconds(results['failover']['took_over_s'])}, "
            f"first request {seconds(results['failover']['first_request_s'])}")
        say(f"   written to {OUT}")
    finally:
        if pg:
            pg.stop()
        if os.environ.get("BENCH_HA_KEEP") == "1":
            say(f"   kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
