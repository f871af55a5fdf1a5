#!/usr/bin/env python3
"""Pre-generates the benchmark's signed GitHub webhook deliveries as raw HTTP/1.1 requests.

The bodies are the recorded payloads in Tests/BridgeCoreTests/Fixtures, serialised compactly (as
GitHub sends them) with the run id, job ids, job names, run number and repository varied, so the
deliveries spread over many runs and repositories. Every request carries a unique
X-GitHub-Delivery and X-Hub-Signature-256 = sha256=HMAC-SHA256(secret, body).

X-GitHub-Delivery is shaped as GitHub's are (--delivery-ids github, the default): a version-1 UUID,
whose first field is the low 32 bits of a 100 ns clock, so ids sent one after another sort next to
each other and a database's delivery index is written in a sweep that goes round every 7 minutes.
The recorded deliveries in ../shared/fixtures show it (16056910-a6ff-11f0-..., a2ca94b0-9c65-11ef-...).
--delivery-ids random gives version-5 UUIDs instead, scattered over the whole index: a worst case that
GitHub does not send, kept to compare with.

Per run (11 deliveries): workflow_run requested; for each of 3 jobs (lint, build, test)
workflow_job queued, in_progress, completed; workflow_run completed. Runs are interleaved: a window
of --active runs is in flight at once and the next delivery comes from a random one of them
(seeded, so every pool is the same), each run's own deliveries staying in order.

Output: a pool file read whole by bench/client.c before any timing starts:
  b"PWBPOOL1\\n", then per request: u32 little-endian length, the request bytes.
A one-line JSON summary goes to stdout.
"""

import argparse
import copy
import hashlib
import hmac
import json
import random
import struct
import sys
import time
import uuid
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "Tests" / "BridgeCoreTests" / "Fixtures"
JOB_QUEUED = "workflow_job.queued.attempt10-test.json"
JOB_COMPLETED = "workflow_job.completed.attempt10-test.json"
RUN_COMPLETED = "workflow_run.completed.attempt10.json"

FIXTURE_RUN_ID = "6454805877"
FIXTURE_JOB_ID = "17556741424"
FIXTURE_REPO = "foo/webhook-testing"
JOB_NAMES = ["lint", "build", "test"]
RUN_ID_BASE = 7_000_000_000
JOB_ID_BASE = 30_000_000_000
REPO_ID_BASE = 900_000_000
NAMESPACE = uuid.UUID("6f1c2f0e-7d1b-4a8e-9a53-3b1f5c2d9e10")
# The second the pool is made, on the version-1 UUID clock (100 ns ticks since 1582-10-15).
# GitHub makes an id when it sends the delivery, so a live delivery's id is newer than every one
# stored; a fixed date would fall behind the stored ones as the days pass, and the bridge looks a
# version-1 id made before its upgrade up in the layout of then too (DeliveryKey).
GITHUB_ID_EPOCH = (int(time.time()) * 10_000_000) + 0x01B21DD213814000
# Clock ticks between a run's first delivery and the next run's: 1 ms a delivery, room for 16.
GITHUB_ID_RUN_TICKS = 16 * 10_000


def delivery_id(org, run_index, position, style="github"):
    """A unique X-GitHub-Delivery per (org, run, position) and pool: pools with other --org values
    never collide, so several can be replayed against one database (bench-scale gives each
    repetition an org of its own).

    "github": a version-1 UUID whose clock is the run's index (1 ms a delivery) and whose node and
    clock sequence come from the org, as GitHub's are time-based; "random": a version-5 UUID."""
    if style == "random":
        return str(uuid.uuid5(NAMESPACE, f"{org}.{run_index}.{position}"))
    ticks = GITHUB_ID_EPOCH + run_index * GITHUB_ID_RUN_TICKS + position * 10_000
    origin = int.from_bytes(hashlib.sha256(org.encode()).digest()[:8], "big")
    node = (origin & 0xFFFF_FFFF_FFFF) | 0x0100_0000_0000  # the multicast bit: not a real MAC
    clock_sequence = (origin >> 48) & 0x3FFF
    return str(
        uuid.UUID(
            fields=(
                ticks & 0xFFFF_FFFF,
                (ticks >> 32) & 0xFFFF,
                ((ticks >> 48) & 0x0FFF) | 0x1000,
                0x80 | (clock_sequence >> 8),
                clock_sequence & 0xFF,
                node,
            )
        )
    )


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def load(name):
    with open(FIXTURES / name, encoding="utf-8") as handle:
        return json.load(handle)


def set_repository(payload):
    """Puts placeholders where the repository's identity appears."""
    repository = payload["repository"]
    repository["id"] = "@REPOID@"
    repository["name"] = "@REPONAME@"
    repository["full_name"] = FIXTURE_REPO  # replaced with every URL below


def templates():
    """The five payload shapes as compact JSON strings with @PLACEHOLDERS@."""
    job_queued = load(JOB_QUEUED)
    job_completed = load(JOB_COMPLETED)
    run_completed = load(RUN_COMPLETED)

    shapes = {}
    for payload in (job_queued, job_completed):
        set_repository(payload)
        payload["workflow_job"]["name"] = "@JOBNAME@"
        payload["workflow_job"]["run_attempt"] = 1
    shapes["job.queued"] = job_queued
    shapes["job.completed"] = job_completed

    # in_progress: the completed job with the runner assigned, the first steps done, one running.
    job_running = copy.deepcopy(job_completed)
    job_running["action"] = "in_progress"
    job = job_running["workflow_job"]
    job["status"] = "in_progress"
    job["conclusion"] = None
    job["completed_at"] = None
    for index, step in enumerate(job.get("steps", [])):
        if index < 2:
            continue
        if index == 2:
            step.update(status="in_progress", conclusion=None, completed_at=None)
        else:
            step.update(status="queued", conclusion=None, started_at=None, completed_at=None)
    shapes["job.in_progress"] = job_running

    set_repository(run_completed)
    run = run_completed["workflow_run"]
    run["run_attempt"] = 1
    run["run_number"] = "@RUNNUM@"
    run["previous_attempt_url"] = None
    shapes["run.completed"] = run_completed

    run_requested = copy.deepcopy(run_completed)
    run_requested["action"] = "requested"
    run_requested["workflow_run"].update(status="queued", conclusion=None)
    shapes["run.requested"] = run_requested

    out = {}
    for name, payload in shapes.items():
        text = compact(payload)
        text = text.replace('"@REPOID@"', "@REPOID@").replace('"@RUNNUM@"', "@RUNNUM@")
        text = text.replace(FIXTURE_REPO, "@REPO@").replace(FIXTURE_RUN_ID, "@RUN@")
        text = text.replace(FIXTURE_JOB_ID, "@JOB@")
        out[name] = text
    return out


def scale_templates():
    """The three shapes `make bench-scale` fills a database with (workflow_run requested,
    workflow_job completed, workflow_run completed), as compact JSON strings with the placeholders
    of templates() plus @WF@ (workflow name), @BRANCH@ (head branch), @CONCLUSION@ and the times
    @T0@ (run created and started, job created), @T1@ (job started) and @T2@ (job completed, run
    updated). scale-fill (Sources/scale-fill) substitutes them; the step timestamps keep their
    recorded values, so each step keeps its recorded duration."""
    run_completed = load(RUN_COMPLETED)
    job_completed = load(JOB_COMPLETED)
    for payload in (run_completed, job_completed):
        set_repository(payload)
    job = job_completed["workflow_job"]
    job.update(name="@JOBNAME@", run_attempt=1, workflow_name="@WF@", head_branch="@BRANCH@",
               conclusion="@CONCLUSION@", created_at="@T0@", started_at="@T1@", completed_at="@T2@")
    run = run_completed["workflow_run"]
    run.update(run_attempt=1, run_number="@RUNNUM@", previous_attempt_url=None, name="@WF@",
               head_branch="@BRANCH@", conclusion="@CONCLUSION@", created_at="@T0@", run_started_at="@T0@",
               updated_at="@T2@")
    run_completed["workflow"]["name"] = "@WF@"
    run_requested = copy.deepcopy(run_completed)
    run_requested["action"] = "requested"
    run_requested["workflow_run"].update(status="queued", conclusion=None, updated_at="@T0@")
    out = {}
    for name, payload in (("run.requested", run_requested), ("job.completed", job_completed),
                          ("run.completed", run_completed)):
        text = compact(payload)
        text = text.replace('"@REPOID@"', "@REPOID@").replace('"@RUNNUM@"', "@RUNNUM@")
        text = text.replace(FIXTURE_REPO, "@REPO@").replace(FIXTURE_RUN_ID, "@RUN@")
        text = text.replace(FIXTURE_JOB_ID, "@JOB@")
        out[name] = text
    return out


def run_deliveries(run_index, repos, org="bench-org", ids="github"):
    """The (event, shape, fields, delivery id) of one run's deliveries, in the order GitHub sends them."""
    repo = run_index % repos
    fields = {
        "@REPO@": f"{org}/repo-{repo:03d}",
        "@REPONAME@": f"repo-{repo:03d}",
        "@REPOID@": str(REPO_ID_BASE + repo),
        "@RUN@": str(RUN_ID_BASE + run_index),
        "@RUNNUM@": str(1 + run_index // repos),
    }
    out = [("workflow_run", "run.requested", fields)]
    for action in ("queued", "in_progress", "completed"):
        for job_index, job_name in enumerate(JOB_NAMES):
            job_fields = dict(fields)
            job_fields["@JOB@"] = str(JOB_ID_BASE + run_index * 10 + job_index)
            job_fields["@JOBNAME@"] = job_name
            out.append(("workflow_job", f"job.{action}", job_fields))
    out.append(("workflow_run", "run.completed", fields))
    return [(event, shape, f, delivery_id(org, run_index, i, ids)) for i, (event, shape, f) in enumerate(out)]


def fill(template, fields):
    for key, value in fields.items():
        template = template.replace(key, value)
    return template


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="the pool file to write")
    parser.add_argument(
        "--scale-templates", metavar="FILE", help="write scale_templates() as one JSON object to FILE and stop"
    )
    parser.add_argument("--count", type=int, default=60_000, help="deliveries to generate")
    parser.add_argument("--secret", default="", help="the webhook secret to sign with (required with --out)")
    parser.add_argument("--repos", type=int, default=20, help="repositories the runs spread over")
    parser.add_argument(
        "--org", default="bench-org", help="the owner of the repositories (another org: workflows with no history yet)"
    )
    parser.add_argument("--active", type=int, default=50, help="runs in flight at once (interleaving)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the interleaving")
    parser.add_argument("--host", default="127.0.0.1", help="the Host header")
    parser.add_argument(
        "--first-run", type=int, default=0, help="index of the first run (another pool for the same database)"
    )
    parser.add_argument(
        "--delivery-ids",
        choices=["github", "random"],
        default="github",
        help="X-GitHub-Delivery shape: time-based as GitHub's (default) or random (a worst case)",
    )
    args = parser.parse_args()
    if args.scale_templates:
        with open(args.scale_templates, "w", encoding="utf-8") as handle:
            json.dump(scale_templates(), handle, ensure_ascii=False)
        return 0
    if not args.out or not args.secret:
        parser.error("--out and --secret are required (or --scale-templates)")

    shapes = templates()
    secret = args.secret.encode()
    rng = random.Random(args.seed)

    active = []  # [deliveries, cursor]
    next_run = args.first_run
    written = 0
    total_bytes = 0
    body_bytes = 0
    events = {}
    with open(args.out, "wb") as out:
        out.write(b"PWBPOOL1\n")
        while written < args.count:
            while len(active) < args.active:
                active.append([run_deliveries(next_run, args.repos, args.org, args.delivery_ids), 0])
                next_run += 1
            slot = rng.randrange(len(active))
            deliveries, cursor = active[slot]
            event, shape, fields, delivery = deliveries[cursor]
            if cursor + 1 == len(deliveries):
                active[slot] = active[-1]
                active.pop()
            else:
                active[slot][1] = cursor + 1

            body = fill(shapes[shape], fields).encode()
            signature = hmac.new(secret, body, hashlib.sha256).hexdigest()
            head = (
                "POST /webhook HTTP/1.1\r\n"
                f"Host: {args.host}\r\n"
                "User-Agent: GitHub-Hookshot/bench\r\n"
                "Accept: */*\r\n"
                f"X-GitHub-Delivery: {delivery}\r\n"
                f"X-GitHub-Event: {event}\r\n"
                "X-GitHub-Hook-ID: 424242\r\n"
                "X-GitHub-Hook-Installation-Target-Type: repository\r\n"
                f"X-Hub-Signature-256: sha256={signature}\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n"
                "\r\n"
            ).encode()
            request = head + body
            out.write(struct.pack("<I", len(request)))
            out.write(request)
            written += 1
            total_bytes += len(request)
            body_bytes += len(body)
            events[shape] = events.get(shape, 0) + 1

    print(
        compact(
            {
                "requests": written,
                "runs_started": next_run - args.first_run,
                "repositories": args.repos,
                "active_runs": args.active,
                "mean_body_bytes": round(body_bytes / max(written, 1)),
                "pool_bytes": total_bytes,
                "mix": events,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
