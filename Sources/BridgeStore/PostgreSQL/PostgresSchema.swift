/// The bridge's tables in PostgreSQL, as named append-only migrations (`PostgresMigrationRunner`):
/// a list of its own, in PostgreSQL's types, beside SQLite's `BridgeSchema`. A released migration is
/// never edited; a change is a new one at the end.
public enum PostgresSchema {
    public static let migrations: [Migration] = [
        Migration(
            name: "create leadership",
            sql: """
                -- One row: who leads and since when. The epoch goes up by one at every takeover, and
                -- every write only a leader may make checks it, so a deposed leader's late write
                -- changes nothing (and tells it to step down).
                CREATE TABLE leadership (
                    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                    epoch bigint NOT NULL CHECK (epoch >= 1),
                    holder text NOT NULL,
                    since double precision NOT NULL,
                    heartbeat_at double precision NOT NULL
                );
                """),
        // The bridge's tables as SQLite's `BridgeSchema` leaves them after all its migrations, in
        // PostgreSQL's types: INTEGER is bigint, REAL double precision (Unix seconds, as in SQLite),
        // TEXT text and BLOB bytea; flags stay 0/1 integers, so one SQL text reads both engines.
        // The same names for tables, columns and indexes (`PostgresSchemaTests` compares them with
        // SQLite's), so a statement that names an index or a column means the same on both.
        // Differences, each where PostgreSQL needs it:
        // - AUTOINCREMENT ids are identity columns;
        // - `jobs` names the columns it references;
        // - the card decision's index reads the state through `run_state_json` (the same path
        //   SQLite's `json_extract` reads), since PostgreSQL's json refuses the `\u0000` escape a
        //   hostile job or branch name puts in the state, and would fail the run's write;
        // - `pushes_per_day` is counted by a PL/pgSQL trigger, the day floored as SQLite's
        //   `CAST(… AS INTEGER)` truncates (PostgreSQL's cast would round).
        Migration(
            name: "create the bridge's tables",
            sql: """
                CREATE TABLE deliveries (
                    id text PRIMARY KEY NOT NULL,
                    hook_id text,
                    event text NOT NULL,
                    action text,
                    received_at double precision NOT NULL,
                    repository text,
                    run_id bigint,
                    run_attempt bigint,
                    outcome text NOT NULL CHECK (outcome IN ('applied', 'ignored', 'rejected')),
                    reason text,
                    content_type text,
                    payload bytea,
                    payload_bytes bigint NOT NULL,
                    duplicates bigint NOT NULL DEFAULT 0,
                    last_duplicate_at double precision,
                    payload_encoding text NOT NULL DEFAULT 'identity' CHECK (payload_encoding IN ('identity', 'lz4'))
                );
                CREATE INDEX deliveries_by_time ON deliveries (received_at);
                CREATE INDEX deliveries_with_payload ON deliveries (received_at) WHERE payload IS NOT NULL;
                CREATE INDEX deliveries_by_run ON deliveries (repository, run_id, run_attempt, received_at);

                CREATE TABLE runs (
                    repository text NOT NULL,
                    run_id bigint NOT NULL,
                    attempt bigint NOT NULL CHECK (attempt >= 1),
                    workflow text,
                    branch text,
                    run_number bigint,
                    status text NOT NULL,
                    conclusion text,
                    slug text NOT NULL,
                    released bigint NOT NULL DEFAULT 0 CHECK (released IN (0, 1)),
                    first_seen_at double precision NOT NULL,
                    updated_at double precision NOT NULL,
                    state text NOT NULL,
                    PRIMARY KEY (repository, run_id, attempt)
                );
                CREATE INDEX runs_by_slug ON runs (slug);
                CREATE INDEX runs_in_flight ON runs (repository, run_id, attempt) WHERE released = 0;
                CREATE INDEX runs_released_by_update ON runs (updated_at) WHERE released = 1;
                CREATE INDEX runs_by_listing ON runs ((status = 'completed'), updated_at DESC);
                CREATE INDEX runs_by_repository_listing ON runs (repository, (status = 'completed'), updated_at DESC);
                CREATE INDEX runs_by_run_id ON runs (run_id, attempt);
                -- The run state as json for reading one value out of it. PostgreSQL's json
                -- functions refuse the escape \\u0000, which a hostile job or branch name puts in the
                -- state: read through this, it is U+FFFD (the stored text keeps it as it was).
                CREATE FUNCTION run_state_json(state text) RETURNS json
                    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
                    RETURN replace(state, '\\u0000', '\\ufffd')::json;
                CREATE INDEX runs_by_card_decision
                    ON runs (((run_state_json(state) #>> '{cardDecision,decidedAt}')::double precision));

                CREATE TABLE jobs (
                    repository text NOT NULL,
                    run_id bigint NOT NULL,
                    attempt bigint NOT NULL,
                    job_id bigint NOT NULL,
                    name text NOT NULL,
                    status text NOT NULL,
                    conclusion text,
                    started_at double precision,
                    completed_at double precision,
                    check_run bigint NOT NULL DEFAULT 0,
                    PRIMARY KEY (repository, run_id, attempt, job_id),
                    FOREIGN KEY (repository, run_id, attempt) REFERENCES runs (repository, run_id, attempt)
                        ON DELETE CASCADE
                );

                CREATE TABLE step_history (
                    repository text NOT NULL,
                    run_id bigint NOT NULL,
                    attempt bigint NOT NULL,
                    workflow text NOT NULL,
                    branch text,
                    conclusion text NOT NULL,
                    finished_at double precision NOT NULL,
                    position bigint NOT NULL,
                    step text NOT NULL,
                    job_count bigint NOT NULL CHECK (job_count >= 0),
                    duration double precision,
                    PRIMARY KEY (repository, run_id, attempt, position)
                );
                CREATE INDEX step_history_by_workflow ON step_history (repository, workflow, finished_at);
                CREATE INDEX step_history_recent
                    ON step_history (repository, workflow, position, finished_at, run_id, attempt);
                -- The retention scan's order: by age, ties broken on the key (SQLite's index carries a rowid).
                CREATE INDEX step_history_runs_by_age ON step_history (finished_at, repository, run_id, attempt)
                    WHERE position = 0;
                CREATE INDEX step_history_runs_by_branch ON step_history (repository, workflow, branch, finished_at)
                    WHERE position = 0;

                CREATE TABLE activities (
                    slug text PRIMARY KEY NOT NULL,
                    name text NOT NULL,
                    owner_repository text,
                    owner_run_id bigint,
                    owner_attempt bigint,
                    phase text NOT NULL,
                    session text NOT NULL,
                    progress_floor text,
                    desired text,
                    updated_at double precision NOT NULL
                );
                CREATE INDEX activities_ended_by_update ON activities (updated_at) WHERE phase = 'ended';

                CREATE TABLE pushes (
                    id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                    slug text NOT NULL,
                    repository text NOT NULL,
                    run_id bigint NOT NULL,
                    attempt bigint NOT NULL,
                    kind text NOT NULL,
                    method text NOT NULL,
                    path text NOT NULL,
                    body text NOT NULL,
                    sent_at double precision NOT NULL,
                    status bigint,
                    outcome text NOT NULL,
                    detail text
                );
                CREATE INDEX pushes_by_run ON pushes (repository, run_id, attempt);
                CREATE INDEX pushes_by_slug ON pushes (slug, sent_at);
                CREATE INDEX pushes_by_time ON pushes (sent_at);

                CREATE TABLE pushes_per_day (
                    day bigint PRIMARY KEY NOT NULL,
                    acknowledged bigint NOT NULL
                );
                CREATE FUNCTION pushes_per_day_count() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO pushes_per_day (day, acknowledged) VALUES (floor(NEW.sent_at / 86400)::bigint, 1)
                    ON CONFLICT (day) DO UPDATE SET acknowledged = pushes_per_day.acknowledged + 1;
                    RETURN NULL;
                END;
                $$;
                CREATE TRIGGER pushes_per_day_count AFTER INSERT ON pushes
                    FOR EACH ROW WHEN (NEW.status BETWEEN 200 AND 299) EXECUTE FUNCTION pushes_per_day_count();

                CREATE TABLE dispatch_state (
                    id bigint PRIMARY KEY CHECK (id = 1),
                    gate text NOT NULL,
                    updated_at double precision NOT NULL
                );

                CREATE TABLE run_arrivals (
                    hour bigint PRIMARY KEY NOT NULL,
                    runs bigint NOT NULL CHECK (runs >= 0)
                );

                CREATE TABLE pruned_runs (
                    repository text PRIMARY KEY NOT NULL,
                    through_run_id bigint NOT NULL,
                    before double precision NOT NULL,
                    retention bigint NOT NULL
                );

                CREATE TABLE retention_marks (
                    what text PRIMARY KEY NOT NULL,
                    before double precision NOT NULL,
                    retention bigint NOT NULL,
                    pruned_at double precision NOT NULL
                );

                CREATE TABLE alerts (
                    id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                    repository text NOT NULL,
                    run_id bigint NOT NULL,
                    attempt bigint NOT NULL,
                    reason text NOT NULL CHECK (reason IN ('failure', 'fixed', 'waiting', 'action')),
                    body text NOT NULL,
                    activity_slug text,
                    created_at double precision NOT NULL,
                    state text NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
                    attempts bigint NOT NULL DEFAULT 0,
                    next_attempt_at double precision NOT NULL,
                    last_attempt_at double precision,
                    status bigint,
                    detail text,
                    notification_id bigint,
                    delivery text,
                    sent_at double precision,
                    UNIQUE (repository, run_id, reason)
                );
                CREATE INDEX alerts_pending ON alerts (next_attempt_at) WHERE state = 'pending';

                CREATE TABLE recovery_hooks (
                    hook text PRIMARY KEY NOT NULL,
                    examined_through double precision NOT NULL,
                    swept_at double precision NOT NULL
                );
                CREATE TABLE recovery_requests (
                    guid text PRIMARY KEY NOT NULL,
                    hook text NOT NULL,
                    attempt_id bigint NOT NULL,
                    event text NOT NULL,
                    requests bigint NOT NULL CHECK (requests >= 1),
                    first_requested_at double precision NOT NULL,
                    last_requested_at double precision NOT NULL,
                    given_up_at double precision
                );
                CREATE INDEX recovery_requests_by_age ON recovery_requests (last_requested_at);

                CREATE TABLE action_tokens (
                    selector text PRIMARY KEY NOT NULL,
                    verifier_hash bytea NOT NULL,
                    action text NOT NULL CHECK (action IN ('rerun', 'cancel', 'approve', 'reject')),
                    repository text NOT NULL,
                    run_id bigint NOT NULL,
                    attempt bigint NOT NULL,
                    environment text,
                    recipient text,
                    surface text NOT NULL,
                    created_at double precision NOT NULL,
                    expires_at double precision NOT NULL,
                    used_at double precision
                );
                CREATE INDEX action_tokens_by_binding ON action_tokens (repository, run_id, attempt, action);
                CREATE INDEX action_tokens_by_expiry ON action_tokens (expires_at);

                CREATE TABLE actions (
                    id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                    action text NOT NULL,
                    repository text NOT NULL,
                    run_id bigint NOT NULL,
                    attempt bigint NOT NULL,
                    environment text,
                    person text NOT NULL,
                    surface text NOT NULL,
                    pressed_at double precision NOT NULL,
                    state text NOT NULL
                        CHECK (state IN ('requested', 'done', 'refused', 'not_applicable', 'interrupted')),
                    github_status bigint,
                    detail text,
                    finished_at double precision
                );
                CREATE INDEX actions_by_run ON actions (repository, run_id, attempt);
                CREATE INDEX actions_by_time ON actions (pressed_at);
                CREATE INDEX actions_requested ON actions (id) WHERE state = 'requested';

                CREATE TABLE widgets (
                    slug text PRIMARY KEY NOT NULL,
                    session text NOT NULL,
                    updated_at double precision NOT NULL
                );
                """),
        // What several instances need and one SQLite file does not: deliveries an instance that
        // does not lead committed for the leader to apply, and the leader's claims on the cards
        // it is sending to.
        Migration(
            name: "deliveries waiting for the leader, card claims",
            sql: """
                -- A follower commits a delivery with waiting = true (its outcome still 'applied', to be
                -- corrected by the leader); the leader applies it and clears the flag in the same
                -- transaction. Not a sequence cursor: rows from several writers commit out of order.
                ALTER TABLE deliveries ADD COLUMN waiting boolean NOT NULL DEFAULT false;
                CREATE INDEX deliveries_waiting ON deliveries (received_at, id) WHERE waiting;

                -- A card with a request out: committed before the send, under the leader's epoch.
                -- A new leader leaves a card claimed under another epoch alone until the claim
                -- expires, so a request the old leader had out is never crossed by a new one.
                CREATE TABLE card_claims (
                    slug text PRIMARY KEY NOT NULL,
                    epoch bigint NOT NULL,
                    expires_at double precision NOT NULL
                );
                """),
        // As SQLite's "store delivery ids in time order": rows already there keep their ids as sent.
        Migration(
            name: "store delivery ids in time order",
            sql: """
                CREATE TABLE delivery_id_layout (
                    id bigint PRIMARY KEY CHECK (id = 1),
                    unordered_before double precision NOT NULL
                );
                INSERT INTO delivery_id_layout (id, unordered_before)
                SELECT 1, coalesce(max(received_at), 0) FROM deliveries;
                """),
        // As SQLite's "count no DELETE as an update".
        Migration(
            name: "count no DELETE as an update",
            sql: """
                DROP TRIGGER pushes_per_day_count ON pushes;
                CREATE TRIGGER pushes_per_day_count AFTER INSERT ON pushes
                    FOR EACH ROW WHEN (NEW.status BETWEEN 200 AND 299 AND NEW.method <> 'DELETE')
                    EXECUTE FUNCTION pushes_per_day_count();
                """),
        // As SQLite's "name the instance that recorded a press": here several instances really
        // share the table, and one starting must leave the presses another is asking GitHub about.
        Migration(
            name: "name the instance that recorded a press",
            sql: """
                ALTER TABLE actions ADD COLUMN instance text;
                """),
        // As SQLite's "one alert per approver".
        Migration(
            name: "one alert per approver",
            sql: """
                ALTER TABLE alerts ADD COLUMN recipient text NOT NULL DEFAULT '';
                ALTER TABLE alerts DROP CONSTRAINT alerts_repository_run_id_reason_key;
                ALTER TABLE alerts ADD CONSTRAINT alerts_repository_run_id_reason_recipient_key
                    UNIQUE (repository, run_id, reason, recipient);
                """),
        // As SQLite's "remember each delivery's body digest".
        Migration(
            name: "remember each delivery's body digest",
            sql: """
                ALTER TABLE deliveries ADD COLUMN body_digest text;
                CREATE INDEX deliveries_by_body ON deliveries (body_digest, received_at) WHERE body_digest IS NOT NULL;
                """),
        // As SQLite's "keep the runner labels of each job".
        Migration(
            name: "keep the runner labels of each job",
            sql: """
                ALTER TABLE jobs ADD COLUMN labels text;
                """),
        // As SQLite's "alert on a job left queued for a runner": PostgreSQL changes the CHECK in place.
        Migration(
            name: "alert on a job left queued for a runner",
            sql: """
                ALTER TABLE alerts DROP CONSTRAINT alerts_reason_check;
                ALTER TABLE alerts ADD CONSTRAINT alerts_reason_check
                    CHECK (reason IN ('failure', 'fixed', 'waiting', 'action', 'queued'));
                """),
    ]
}
