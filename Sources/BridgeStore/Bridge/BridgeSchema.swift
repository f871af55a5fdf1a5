/// The bridge's tables, as named append-only migrations: a released migration is never edited,
/// a change is a new one at the end.
public enum BridgeSchema {
    public static let migrations: [Migration] = [
        Migration(
            name: "create deliveries, runs, jobs, step history and activities",
            sql: """
                CREATE TABLE deliveries (
                    id TEXT PRIMARY KEY NOT NULL,
                    hook_id TEXT,
                    event TEXT NOT NULL,
                    action TEXT,
                    received_at REAL NOT NULL,
                    repository TEXT,
                    run_id INTEGER,
                    run_attempt INTEGER,
                    outcome TEXT NOT NULL CHECK (outcome IN ('applied', 'ignored', 'rejected')),
                    reason TEXT,
                    content_type TEXT,
                    payload BLOB,
                    payload_bytes INTEGER NOT NULL,
                    duplicates INTEGER NOT NULL DEFAULT 0,
                    last_duplicate_at REAL
                );
                CREATE INDEX deliveries_by_time ON deliveries (received_at);
                CREATE INDEX deliveries_by_run ON deliveries (repository, run_id, run_attempt);

                CREATE TABLE runs (
                    repository TEXT NOT NULL,
                    run_id INTEGER NOT NULL,
                    attempt INTEGER NOT NULL CHECK (attempt >= 1),
                    workflow TEXT,
                    branch TEXT,
                    run_number INTEGER,
                    status TEXT NOT NULL,
                    conclusion TEXT,
                    slug TEXT NOT NULL,
                    released INTEGER NOT NULL DEFAULT 0 CHECK (released IN (0, 1)),
                    first_seen_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    state TEXT NOT NULL,
                    PRIMARY KEY (repository, run_id, attempt)
                );
                CREATE INDEX runs_by_update ON runs (updated_at);
                CREATE INDEX runs_by_slug ON runs (slug);

                CREATE TABLE jobs (
                    repository TEXT NOT NULL,
                    run_id INTEGER NOT NULL,
                    attempt INTEGER NOT NULL,
                    job_id INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    status TEXT NOT NULL,
                    conclusion TEXT,
                    started_at REAL,
                    completed_at REAL,
                    check_run INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (repository, run_id, attempt, job_id),
                    FOREIGN KEY (repository, run_id, attempt) REFERENCES runs ON DELETE CASCADE
                );

                CREATE TABLE step_history (
                    repository TEXT NOT NULL,
                    run_id INTEGER NOT NULL,
                    attempt INTEGER NOT NULL,
                    workflow TEXT NOT NULL,
                    branch TEXT,
                    conclusion TEXT NOT NULL,
                    finished_at REAL NOT NULL,
                    position INTEGER NOT NULL,
                    step TEXT NOT NULL,
                    job_count INTEGER NOT NULL CHECK (job_count >= 0),
                    duration REAL,
                    PRIMARY KEY (repository, run_id, attempt, position)
                );
                CREATE INDEX step_history_by_workflow ON step_history (repository, workflow, finished_at);

                CREATE TABLE activities (
                    slug TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    owner_repository TEXT,
                    owner_run_id INTEGER,
                    owner_attempt INTEGER,
                    phase TEXT NOT NULL,
                    session TEXT NOT NULL,
                    progress_floor TEXT,
                    desired TEXT,
                    acknowledged TEXT,
                    updated_at REAL NOT NULL
                );
                """),
        Migration(
            name: "record every request sent to PushWard",
            sql: """
                CREATE TABLE pushes (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    slug TEXT NOT NULL,
                    repository TEXT NOT NULL,
                    run_id INTEGER NOT NULL,
                    attempt INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    method TEXT NOT NULL,
                    path TEXT NOT NULL,
                    body TEXT NOT NULL,
                    sent_at REAL NOT NULL,
                    status INTEGER,
                    outcome TEXT NOT NULL,
                    detail TEXT
                );
                CREATE INDEX pushes_by_run ON pushes (repository, run_id, attempt);
                CREATE INDEX pushes_by_slug ON pushes (slug, sent_at);
                """),
        Migration(
            name: "keep the dispatch gate (quota, rate limit, refused key, circuit breaker)",
            sql: """
                CREATE TABLE dispatch_state (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    gate TEXT NOT NULL,
                    updated_at REAL NOT NULL
                );
                """),
        Migration(
            name: "keep raw payloads compressed",
            sql: """
                ALTER TABLE deliveries ADD COLUMN payload_encoding TEXT NOT NULL DEFAULT 'identity'
                    CHECK (payload_encoding IN ('identity', 'lz4'));
                """),
        Migration(
            name: "find a period's pushes by time, for the status page's month chart",
            sql: """
                CREATE INDEX pushes_by_time ON pushes (sent_at);
                """),
        Migration(
            name: "read only the work in flight at start: unreleased runs, new runs per hour, recent history",
            sql: """
                CREATE INDEX runs_in_flight ON runs (repository, run_id, attempt) WHERE released = 0;
                CREATE INDEX step_history_recent
                    ON step_history (repository, workflow, position, finished_at, run_id, attempt);
                CREATE TABLE run_arrivals (
                    hour INTEGER PRIMARY KEY NOT NULL,
                    runs INTEGER NOT NULL CHECK (runs >= 0)
                );
                INSERT INTO run_arrivals (hour, runs)
                    SELECT CAST(first_seen_at / 3600 AS INTEGER), count(*) FROM runs
                    WHERE updated_at >= CAST(strftime('%s', 'now') AS REAL) - 14 * 86400
                        AND first_seen_at >= CAST(strftime('%s', 'now') AS REAL) - 14 * 86400
                    GROUP BY 1;
                """),
        // Indexes only (a pass over each table, no rewrite) and two small tables: bounded time on a
        // database with a year of rows. The partial indexes hold just the rows pruning looks at: finished
        // payloads still kept, finished runs, ended cards, and one entry per finished run in step history
        // (its first step).
        Migration(
            name: "prune by age through indexes, and remember what retention removed",
            sql: """
                CREATE INDEX deliveries_with_payload ON deliveries (received_at) WHERE payload IS NOT NULL;
                CREATE INDEX runs_released_by_update ON runs (updated_at) WHERE released = 1;
                CREATE INDEX activities_ended_by_update ON activities (updated_at) WHERE phase = 'ended';
                CREATE INDEX step_history_runs_by_age ON step_history (finished_at) WHERE position = 0;
                CREATE INDEX step_history_runs_by_branch ON step_history (repository, workflow, branch, finished_at)
                    WHERE position = 0;

                CREATE TABLE pruned_runs (
                    repository TEXT PRIMARY KEY NOT NULL,
                    through_run_id INTEGER NOT NULL,
                    before REAL NOT NULL,
                    retention INTEGER NOT NULL
                );

                CREATE TABLE retention_marks (
                    what TEXT PRIMARY KEY NOT NULL,
                    before REAL NOT NULL,
                    retention INTEGER NOT NULL,
                    pruned_at REAL NOT NULL
                );
                """),
        // Every read the CLI, the admin API and the status page make is served by an index
        // (Tests/BridgeStoreTests/QueryPlanTests.swift checks the plans), so each answers in
        // about the same time with a year of rows as with a day's:
        // - `runs list` (and the page) sort on `status = 'completed', updated_at DESC`: indexed
        //   by that very expression, overall and per repository, the walk stops after the limit;
        // - `runs show`, `explain` and `/api/runs/{id}` look a run id up without its repository;
        // - a run's deliveries come newest first: the run's index gains `received_at`, so they
        //   come in index order (same name: one index to maintain on ingest, not two);
        // - the month chart's level markers: the planner's decision time, read from the state;
        // - the month chart's bars: acknowledged requests per UTC day, counted as they are
        //   inserted (a trigger; the rows so far counted once here), since counting a month of
        //   them on every page load grows with the traffic even through an index.
        // Building these on a large database takes a while once (seconds per million rows).
        Migration(
            name: "serve every read of the CLI, admin API and status page from an index",
            sql: """
                CREATE INDEX runs_by_listing ON runs (status = 'completed', updated_at DESC);
                CREATE INDEX runs_by_repository_listing ON runs (repository, status = 'completed', updated_at DESC);
                CREATE INDEX runs_by_run_id ON runs (run_id, attempt);
                CREATE INDEX runs_by_card_decision ON runs (json_extract(state, '$.cardDecision.decidedAt'));
                DROP INDEX deliveries_by_run;
                CREATE INDEX deliveries_by_run ON deliveries (repository, run_id, run_attempt, received_at);
                CREATE TABLE pushes_per_day (
                    day INTEGER PRIMARY KEY NOT NULL,
                    acknowledged INTEGER NOT NULL
                );
                INSERT INTO pushes_per_day (day, acknowledged)
                    SELECT CAST(sent_at / 86400 AS INTEGER), COUNT(*) FROM pushes
                    WHERE status BETWEEN 200 AND 299 GROUP BY 1;
                CREATE TRIGGER pushes_per_day_count AFTER INSERT ON pushes
                WHEN NEW.status BETWEEN 200 AND 299
                BEGIN
                    INSERT INTO pushes_per_day (day, acknowledged) VALUES (CAST(NEW.sent_at / 86400 AS INTEGER), 1)
                    ON CONFLICT (day) DO UPDATE SET acknowledged = acknowledged + 1;
                END;
                """),
        // `runs_by_update` (plain `updated_at`) serves no read any more: retention walks
        // `runs_released_by_update`, the lists `runs_by_listing`, the chart `runs_by_card_decision`
        // (QueryPlanTests). Every run upsert still moved its entry: one B-tree fewer per write,
        // which at a million runs is a level-4 tree touched on every delivery of a run.
        Migration(
            name: "drop the runs index no read uses",
            sql: """
                DROP INDEX runs_by_update;
                """),
        // One row per run (id, not attempt) and reason, written in the delivery's transaction
        // before anything is sent: the unique key is what makes an alert go out once across
        // redeliveries, re-runs and restarts. `pending` rows are the sender's queue (a partial
        // index, so the queue costs the same with a year of sent alerts); the rest is the record
        // `runs show`, `explain` and the status page show, pruned with its run.
        Migration(
            name: "record failure, fix and approval alerts before sending them",
            sql: """
                CREATE TABLE alerts (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    repository TEXT NOT NULL,
                    run_id INTEGER NOT NULL,
                    attempt INTEGER NOT NULL,
                    reason TEXT NOT NULL CHECK (reason IN ('failure', 'fixed', 'waiting')),
                    body TEXT NOT NULL,
                    activity_slug TEXT,
                    created_at REAL NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at REAL NOT NULL,
                    last_attempt_at REAL,
                    status INTEGER,
                    detail TEXT,
                    notification_id INTEGER,
                    delivery TEXT,
                    sent_at REAL,
                    UNIQUE (repository, run_id, reason)
                );
                CREATE INDEX alerts_pending ON alerts (next_attempt_at) WHERE state = 'pending';
                """),
        // Recovery through GitHub's API (`github.api`): per hook, the time up to which its delivery
        // log was examined and resolved, so a sweep (or the first after a restart) reads back only
        // that far; per GUID, the redeliveries asked for, so one is not asked for again before it
        // had time to arrive, nor for ever. Both small: a row per hook, a row per missed delivery
        // (pruned a week after its last request, past GitHub's own 3 days).
        Migration(
            name: "remember how far each hook's delivery log was swept, and the redeliveries asked for",
            sql: """
                CREATE TABLE recovery_hooks (
                    hook TEXT PRIMARY KEY NOT NULL,
                    examined_through REAL NOT NULL,
                    swept_at REAL NOT NULL
                );
                CREATE TABLE recovery_requests (
                    guid TEXT PRIMARY KEY NOT NULL,
                    hook TEXT NOT NULL,
                    attempt_id INTEGER NOT NULL,
                    event TEXT NOT NULL,
                    requests INTEGER NOT NULL CHECK (requests >= 1),
                    first_requested_at REAL NOT NULL,
                    last_requested_at REAL NOT NULL,
                    given_up_at REAL
                );
                CREATE INDEX recovery_requests_by_age ON recovery_requests (last_requested_at);
                """),
        // Buttons that act on GitHub from a phone (`actions`). A token is bound to one action on one
        // attempt (and environment) before the request carrying it is sent; only a SHA-256 of its
        // secret part is kept, so the table read by someone else presses nothing. `actions` is the
        // audit: every press that found a live token, with who, what and GitHub's answer. `alerts`
        // is rebuilt to take the reason `action` (a refused press is said in a notification too);
        // it holds a row per alerting run, so the copy is quick.
        Migration(
            name: "bind phone buttons to single-use tokens, keep an audit of what they did",
            sql: """
                CREATE TABLE action_tokens (
                    selector TEXT PRIMARY KEY NOT NULL,
                    verifier_hash BLOB NOT NULL,
                    action TEXT NOT NULL CHECK (action IN ('rerun', 'cancel', 'approve', 'reject')),
                    repository TEXT NOT NULL,
                    run_id INTEGER NOT NULL,
                    attempt INTEGER NOT NULL,
                    environment TEXT,
                    recipient TEXT,
                    surface TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    used_at REAL
                );
                CREATE INDEX action_tokens_by_binding ON action_tokens (repository, run_id, attempt, action);
                CREATE INDEX action_tokens_by_expiry ON action_tokens (expires_at);
                CREATE TABLE actions (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    action TEXT NOT NULL,
                    repository TEXT NOT NULL,
                    run_id INTEGER NOT NULL,
                    attempt INTEGER NOT NULL,
                    environment TEXT,
                    person TEXT NOT NULL,
                    surface TEXT NOT NULL,
                    pressed_at REAL NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('requested', 'done', 'refused', 'not_applicable', 'interrupted')),
                    github_status INTEGER,
                    detail TEXT,
                    finished_at REAL
                );
                CREATE INDEX actions_by_run ON actions (repository, run_id, attempt);
                CREATE INDEX actions_by_time ON actions (pressed_at);
                CREATE INDEX actions_requested ON actions (id) WHERE state = 'requested';
                CREATE TABLE alerts_with_actions (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    repository TEXT NOT NULL,
                    run_id INTEGER NOT NULL,
                    attempt INTEGER NOT NULL,
                    reason TEXT NOT NULL CHECK (reason IN ('failure', 'fixed', 'waiting', 'action')),
                    body TEXT NOT NULL,
                    activity_slug TEXT,
                    created_at REAL NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at REAL NOT NULL,
                    last_attempt_at REAL,
                    status INTEGER,
                    detail TEXT,
                    notification_id INTEGER,
                    delivery TEXT,
                    sent_at REAL,
                    UNIQUE (repository, run_id, reason)
                );
                INSERT INTO alerts_with_actions SELECT * FROM alerts;
                DROP TABLE alerts;
                ALTER TABLE alerts_with_actions RENAME TO alerts;
                CREATE INDEX alerts_pending ON alerts (next_attempt_at) WHERE state = 'pending';
                """),
        // Home-screen widgets (`widgets`): a row per configured slug, what the widget follows and
        // what PushWard holds. A handful of rows whatever the history (PushWard allows 50 widgets).
        Migration(
            name: "keep the state of home-screen widgets",
            sql: """
                CREATE TABLE widgets (
                    slug TEXT PRIMARY KEY NOT NULL,
                    session TEXT NOT NULL,
                    updated_at REAL NOT NULL
                );
                """),
        // A card's acknowledged content was written twice on every save: in the session's JSON and
        // in a column of its own, which only `session(slug:)` read. Each copy is a card's whole
        // content; at 1,000 deliveries a second the card rows were 1.5 of the 18 WAL pages a
        // delivery writes. The session keeps it. A few rows per repository: the rewrite is quick.
        Migration(
            name: "keep a card's acknowledged content once, in its session",
            sql: """
                ALTER TABLE activities DROP COLUMN acknowledged;
                """),
        // Delivery ids are stored time-ordered from now on (`DeliveryKey`); the rows already there
        // keep theirs as sent, since rewriting a month of ids would rewrite every page of the
        // table. What is remembered is when the newest of them arrived: only a version-1 id made
        // before that can be in a row as sent, so only a redelivery of one of them looks twice.
        Migration(
            name: "store delivery ids in time order",
            sql: """
                CREATE TABLE delivery_id_layout (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    unordered_before REAL NOT NULL
                );
                INSERT INTO delivery_id_layout (id, unordered_before)
                SELECT 1, coalesce(max(received_at), 0) FROM deliveries;
                """),
        // The bridge deletes its own ended activities (`DELETE`, recorded in `pushes` like every
        // request): PushWard charges no update for one, so the month's count leaves them out.
        Migration(
            name: "count no DELETE as an update",
            sql: """
                DROP TRIGGER pushes_per_day_count;
                CREATE TRIGGER pushes_per_day_count AFTER INSERT ON pushes
                WHEN NEW.status BETWEEN 200 AND 299 AND NEW.method <> 'DELETE'
                BEGIN
                    INSERT INTO pushes_per_day (day, acknowledged) VALUES (CAST(NEW.sent_at / 86400 AS INTEGER), 1)
                    ON CONFLICT (day) DO UPDATE SET acknowledged = acknowledged + 1;
                END;
                """),
        // A press names the instance that recorded it and asks GitHub, so that at start an
        // instance marks only its own cut-off presses `interrupted` (on PostgreSQL another
        // instance's may be under way). Rows already there have none and stay anyone's.
        Migration(
            name: "name the instance that recorded a press",
            sql: """
                ALTER TABLE actions ADD COLUMN instance TEXT;
                """),
        // A captured signed body replayed under a new X-GitHub-Delivery is a duplicate: each
        // delivery keeps its body's SHA-256 (hex), found through a partial index.
        // A review goes to each approver on a notification of its own: one alert per run, reason
        // and recipient ('' for the run's own alert of a reason, as every row before).
        Migration(
            name: "one alert per approver",
            sql: """
                CREATE TABLE alerts_per_recipient (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    repository TEXT NOT NULL,
                    run_id INTEGER NOT NULL,
                    attempt INTEGER NOT NULL,
                    reason TEXT NOT NULL CHECK (reason IN ('failure', 'fixed', 'waiting', 'action')),
                    body TEXT NOT NULL,
                    activity_slug TEXT,
                    created_at REAL NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at REAL NOT NULL,
                    last_attempt_at REAL,
                    status INTEGER,
                    detail TEXT,
                    notification_id INTEGER,
                    delivery TEXT,
                    sent_at REAL,
                    recipient TEXT NOT NULL DEFAULT '',
                    UNIQUE (repository, run_id, reason, recipient)
                );
                INSERT INTO alerts_per_recipient
                    (id, repository, run_id, attempt, reason, body, activity_slug, created_at, state, attempts,
                     next_attempt_at, last_attempt_at, status, detail, notification_id, delivery, sent_at)
                    SELECT id, repository, run_id, attempt, reason, body, activity_slug, created_at, state, attempts,
                        next_attempt_at, last_attempt_at, status, detail, notification_id, delivery, sent_at
                    FROM alerts;
                DROP TABLE alerts;
                ALTER TABLE alerts_per_recipient RENAME TO alerts;
                CREATE INDEX alerts_pending ON alerts (next_attempt_at) WHERE state = 'pending';
                """),
        Migration(
            name: "remember each delivery's body digest",
            sql: """
                ALTER TABLE deliveries ADD COLUMN body_digest TEXT;
                CREATE INDEX deliveries_by_body ON deliveries (body_digest, received_at) WHERE body_digest IS NOT NULL;
                """),
        // A job queued past `activity.runner_wait` is said with the runners it waits for
        // (`workflow_job.labels`): kept on its row as a JSON array (null when the payload named
        // none), so which label nobody serves can be asked of the table, not only of the state.
        Migration(
            name: "keep the runner labels of each job",
            sql: """
                ALTER TABLE jobs ADD COLUMN labels TEXT;
                """),
        // An alert rule may ask to hear of a job left queued `queued_after` (reason `queued`).
        // SQLite cannot change a CHECK: `alerts` is rebuilt with the new reason, as for `action`;
        // a row per alerting run, so the copy is quick.
        Migration(
            name: "alert on a job left queued for a runner",
            sql: """
                CREATE TABLE alerts_with_queued (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    repository TEXT NOT NULL,
                    run_id INTEGER NOT NULL,
                    attempt INTEGER NOT NULL,
                    reason TEXT NOT NULL CHECK (reason IN ('failure', 'fixed', 'waiting', 'action', 'queued')),
                    body TEXT NOT NULL,
                    activity_slug TEXT,
                    created_at REAL NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at REAL NOT NULL,
                    last_attempt_at REAL,
                    status INTEGER,
                    detail TEXT,
                    notification_id INTEGER,
                    delivery TEXT,
                    sent_at REAL,
                    recipient TEXT NOT NULL DEFAULT '',
                    UNIQUE (repository, run_id, reason, recipient)
                );
                INSERT INTO alerts_with_queued
                    (id, repository, run_id, attempt, reason, body, activity_slug, created_at, state, attempts,
                     next_attempt_at, last_attempt_at, status, detail, notification_id, delivery, sent_at, recipient)
                    SELECT id, repository, run_id, attempt, reason, body, activity_slug, created_at, state, attempts,
                        next_attempt_at, last_attempt_at, status, detail, notification_id, delivery, sent_at, recipient
                    FROM alerts;
                DROP TABLE alerts;
                ALTER TABLE alerts_with_queued RENAME TO alerts;
                CREATE INDEX alerts_pending ON alerts (next_attempt_at) WHERE state = 'pending';
                """),
    ]
}
