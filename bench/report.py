#!/usr/bin/env python3
"""Summarises bench/run.sh's repetitions: medians over runs, ratios to the issue's targets.

Prints a short report on stdout and writes the JSON summary (every repetition included) to --out.
The targets are shown as ratios for orientation only; nothing here passes or fails.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

THROUGHPUT_TARGET = 5000.0  # deliveries/s, closed loop
P99_TARGET_MS = 20.0  # at the fixed rate


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def git(root, *args):
    try:
        return subprocess.run(
            ["git", "-C", root, *args], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def others_pct(r):
    """CPU used by neither the daemon nor the client during the window, in % of one CPU."""
    if r.get("machine_busy_pct") is None or r.get("daemon_cpu_pct") is None:
        return None
    return max(0.0, r["machine_busy_pct"] * r["cpus"] - r["daemon_cpu_pct"] - r["client_cpu_pct"])


def thread_medians(runs):
    names = {}
    for r in runs:
        for t in r.get("daemon_threads", []):
            names.setdefault(t["name"], []).append(t["cpu_pct"])
    return {name: round(median(v), 1) for name, v in sorted(names.items(), key=lambda kv: -median(kv[1]))}


def fmt(value, unit="", digits=1):
    return "n/a" if value is None else f"{value:.{digits}f}{unit}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", required=True)
    parser.add_argument("--pool", required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--rate", type=float, required=True)
    args = parser.parse_args()

    runs = [json.loads(line) for line in open(args.results) if line.strip()]
    pool = json.load(open(args.pool))
    closed = [r for r in runs if r["mode"] == "closed"]
    opened = [r for r in runs if r["mode"] == "open"]

    throughput = median([r["throughput_rps"] for r in closed])
    latency = {k: median([r["latency_ms"][k] for r in opened]) for k in ("median", "p90", "p99", "p999", "max")}
    closed_latency = {k: median([r["latency_ms"][k] for r in closed]) for k in ("median", "p99")}
    non_202 = {}
    for r in runs:
        for status, count in r["status_counts"].items():
            if status != "202":
                non_202[status] = non_202.get(status, 0) + count
    errors = sum(r["connection_errors"] for r in runs)
    unanswered = sum(r["abandoned"] for r in runs)
    durable = all(r["durable"] for r in runs)
    exhausted = any(r["pool_exhausted"] for r in runs)
    loadavg = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else None
    dirty = git(args.root, "status", "--porcelain", "--untracked-files=no", "--", "Sources", "Package.swift")

    summary = {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": git(args.root, "rev-parse", "HEAD"),
        "sources_modified": bool(dirty),
        "binary": args.binary,
        "machine": {
            "cpus": os.cpu_count(),
            "cpu_model": cpu_model(),
            "kernel": platform.release(),
            "loadavg_after": loadavg,
        },
        "pool": pool,
        "throughput": {
            "deliveries_per_s_median": throughput,
            "runs": [r["throughput_rps"] for r in closed],
            "target": THROUGHPUT_TARGET,
            "ratio_to_target": round(throughput / THROUGHPUT_TARGET, 3) if throughput else None,
            "connections": closed[0]["connections"] if closed else None,
            "ack_latency_ms_median": closed_latency,
            "daemon_cpu_pct_median": median([r.get("daemon_cpu_pct") for r in closed]),
            "daemon_threads_cpu_pct_median": thread_medians(closed),
            "client_cpu_pct_median": median([r["client_cpu_pct"] for r in closed]),
            "other_processes_cpu_pct_median": median([others_pct(r) for r in closed]),
        },
        "latency": {
            "rate": args.rate,
            "achieved_rate_median": median([r.get("achieved_rate") for r in opened]),
            "ms_median_of_runs": latency,
            "p99_runs": [r["latency_ms"]["p99"] for r in opened],
            "p99_target_ms": P99_TARGET_MS,
            "p99_ratio_to_target": round(latency["p99"] / P99_TARGET_MS, 3) if latency["p99"] else None,
            "daemon_cpu_pct_median": median([r.get("daemon_cpu_pct") for r in opened]),
            "client_cpu_pct_median": median([r["client_cpu_pct"] for r in opened]),
            "other_processes_cpu_pct_median": median([others_pct(r) for r in opened]),
            "max_queue_max": max((r.get("max_queue", 0) for r in opened), default=None),
        },
        "durability": {
            "every_202_has_its_row": durable,
            "rows_equal_202s_in_every_run": all(r["exact"] for r in runs),
            "per_run": [
                {"mode": r["mode"], "ok": r["ok_total"], "rows": r["database"]["rows"], "unanswered": r["in_doubt"]}
                for r in runs
            ],
        },
        "non_202": non_202,
        "connection_errors": errors,
        "unanswered_after_drain": unanswered,
        "pool_exhausted": exhausted,
        "rate_above_throughput": bool(throughput and throughput < args.rate),
        "repetitions_sharing_the_machine": sum(1 for r in runs if (others_pct(r) or 0) > 25),
        "repetitions": runs,
    }
    with open(args.out, "w") as handle:
        json.dump(summary, handle, indent=2)
        handle.write("\n")

    t = summary["throughput"]
    lat = summary["latency"]
    print()
    print("pushward-bridge benchmark"
          f" ({summary['machine']['cpus']} CPUs, {summary['machine']['cpu_model'] or 'unknown CPU'},"
          f" commit {(summary['commit'] or 'unknown')[:10]}{' + local changes' if dirty else ''})")
    print(f"  deliveries: mean body {pool['mean_body_bytes']} B, {pool['repositories']} repositories,"
          f" 11 per run (workflow_run requested/completed, 3 jobs x queued/in_progress/completed)")
    print(f"  throughput, closed loop, {t['connections']} keep-alive connections, {len(closed)} runs:")
    print(f"    {fmt(throughput, ' deliveries/s')} median"
          f"  (runs: {', '.join(fmt(v) for v in t['runs'])}; {fmt(t['ratio_to_target'], '', 2)} x the 5,000/s target)")
    print(f"    ack latency under that load: median {fmt(closed_latency['median'], ' ms', 2)},"
          f" p99 {fmt(closed_latency['p99'], ' ms', 2)}")
    print(f"    CPU during the window (% of one CPU): daemon {fmt(t['daemon_cpu_pct_median'])},"
          f" load client {fmt(t['client_cpu_pct_median'])}, other processes {fmt(t['other_processes_cpu_pct_median'])}")
    threads = ", ".join(f"{name} {pct}" for name, pct in list(t["daemon_threads_cpu_pct_median"].items())[:5])
    print(f"    daemon threads: {threads}")
    print(f"  ack latency, open loop at {lat['rate']:.0f}/s (from the scheduled send), {len(opened)} runs:")
    print(f"    median {fmt(latency['median'], ' ms', 2)}, p90 {fmt(latency['p90'], ' ms', 2)},"
          f" p99 {fmt(latency['p99'], ' ms', 2)}, max {fmt(latency['max'], ' ms', 2)}"
          f"  (p99 runs: {', '.join(fmt(v, '', 2) for v in lat['p99_runs'])};"
          f" {fmt(lat['p99_ratio_to_target'], '', 2)} x the 20 ms target)")
    print(f"    achieved {fmt(lat['achieved_rate_median'])}/s; CPU: daemon {fmt(lat['daemon_cpu_pct_median'])},"
          f" client {fmt(lat['client_cpu_pct_median'])}, other processes {fmt(lat['other_processes_cpu_pct_median'])}")
    if throughput and throughput < args.rate:
        print(f"    note: {args.rate:.0f}/s is above the measured throughput ({throughput:.0f}/s): the daemon falls"
              " behind, the backlog grows for the whole window, and these figures measure that queue")
    noisy = [r for r in runs if (others_pct(r) or 0) > 25]
    if noisy:
        print(f"  note: {len(noisy)} of {len(runs)} repetitions shared the machine with other processes"
              " (> 25 % of a CPU): expect lower, noisier figures; run again on a quiet machine")
    exact = summary["durability"]["rows_equal_202s_in_every_run"]
    print(f"  durability: rows in deliveries = 202 answers in every run: {'yes' if exact else 'no'}"
          f" ({', '.join(str(r['rows']) for r in summary['durability']['per_run'])} rows)")
    if not exact:
        print(f"    every 202 has its row, extra rows only for requests that got no answer: {'yes' if durable else 'NO'}"
              f" ({', '.join(str(r['unanswered']) for r in summary['durability']['per_run'])} unanswered)")
    if non_202 or errors or unanswered:
        print(f"  non-202 answers: {non_202 or 'none'}; connection errors: {errors};"
              f" unanswered when the drain limit ran out: {unanswered}")
    if exhausted:
        print("  note: a run used up the pre-generated pool; raise BENCH_POOL")
    print(f"  summary: {args.out}")
    return 0 if durable else 1


if __name__ == "__main__":
    sys.exit(main())
