import BridgeCore
import Foundation

/// What a button's token is bound to (`action_tokens`): one action on one attempt of one run,
/// for one environment (a review) and one recipient, until `expiresAt`, once.
public struct ActionBinding: Sendable, Equatable {
    public var kind: ActionKind
    public var run: RunKey
    /// The environment a review button approves or rejects; nil for a re-run or a cancel.
    public var environment: String?
    /// Who the button went to: the routed person, or nil for everyone the key reaches.
    public var recipient: String?
    /// Where the button was shown: `card <slug>` or `alert <id>`.
    public var surface: String
    public var createdAt: UnixTime
    public var expiresAt: UnixTime

    public init(
        kind: ActionKind, run: RunKey, environment: String?, recipient: String?, surface: String,
        createdAt: UnixTime, expiresAt: UnixTime
    ) {
        self.kind = kind
        self.run = run
        self.environment = environment
        self.recipient = recipient
        self.surface = surface
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// One press of a button that found a live token (`actions`): the audit.
public struct ActionRecord: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        /// Asked of GitHub; no answer recorded yet.
        case requested
        /// GitHub took it.
        case done
        /// GitHub refused it (no permission, already running, …).
        case refused
        /// The run was no longer in a state where the action made sense: nothing was asked.
        case notApplicable = "not_applicable"
        /// The bridge stopped before GitHub's answer was recorded; it is not asked again.
        case interrupted
    }

    public var id: Int64
    public var kind: ActionKind
    public var run: RunKey
    public var environment: String?
    public var person: String
    public var surface: String
    public var pressedAt: UnixTime
    public var state: State
    public var githubStatus: Int?
    public var detail: String?
    public var finishedAt: UnixTime?
    /// The instance that recorded the press and asked GitHub (nil before instances were named).
    public var instance: String?
}

/// `action_tokens` and `actions`: minting and spending tokens, and the audit. Every read is on a
/// primary key or an index (`action_tokens_by_binding`, `actions_by_run`, `actions_by_time`).
extension BridgeDatabase {
    /// Records a token before the request that carries it is sent: `selector` is looked up,
    /// `verifierHash` (SHA-256 of the secret part) compared.
    public func insertActionToken(selector: String, verifierHash: Data, binding: ActionBinding) throws {
        try store.run(
            """
            INSERT INTO action_tokens (selector, verifier_hash, action, repository, run_id, attempt, environment,
                recipient, surface, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(selector), .blob(verifierHash), .text(binding.kind.rawValue), .text(binding.run.repository),
                .int(binding.run.runID), .int(binding.run.attempt), .string(binding.environment),
                .string(binding.recipient), .text(binding.surface), .real(binding.createdAt),
                .real(binding.expiresAt),
            ])
    }

    /// The live (unused, unexpired) token with `selector`: its binding and verifier hash. A read
    /// for inspection and tests only: a press spends with `spendActionToken`, never after a read.
    public func liveActionToken(selector: String, at now: UnixTime) throws -> (ActionBinding, Data)? {
        try store.queryOne(
            """
            SELECT action, repository, run_id, attempt, environment, recipient, surface, created_at, expires_at,
                verifier_hash
            FROM action_tokens WHERE selector = ? AND used_at IS NULL AND expires_at > ?
            """, [.text(selector), .real(now)]
        ) { row in
            guard let kind = ActionKind(rawValue: row.string(0) ?? "") else { return nil }
            let binding = ActionBinding(
                kind: kind,
                run: RunKey(repository: row.string(1) ?? "", runID: row.int(2) ?? 0, attempt: row.int(3) ?? 1),
                environment: row.string(4), recipient: row.string(5), surface: row.string(6) ?? "",
                createdAt: row.double(7) ?? 0, expiresAt: row.double(8) ?? 0)
            return (binding, row.data(9) ?? Data())
        } ?? nil
    }

    /// Spends the live token with `selector` and `verifierHash` and returns its binding, in one
    /// conditional update: nil when no such token is live (unknown, forged, expired, or spent by a
    /// press that committed first). Two presses of one token, on one instance or on two sharing a
    /// PostgreSQL database, both run this statement; the row lock makes the second wait for the
    /// first's commit and then find `used_at` set, so exactly one gets the binding. No read comes
    /// before it that a concurrent press could make stale.
    ///
    /// The hash is compared by the database: both sides are SHA-256 digests, so the comparison's
    /// timing says nothing an attacker can use about the secret.
    public func spendActionToken(selector: String, verifierHash: Data, at now: UnixTime) throws -> ActionBinding? {
        try store.query(
            """
            UPDATE action_tokens SET used_at = ?
            WHERE selector = ? AND verifier_hash = ? AND used_at IS NULL AND expires_at > ?
            RETURNING action, repository, run_id, attempt, environment, recipient, surface, created_at, expires_at
            """, [.real(now), .text(selector), .blob(verifierHash), .real(now)]
        ) { row -> ActionBinding? in
            guard let kind = ActionKind(rawValue: row.string(0) ?? "") else { return nil }
            return ActionBinding(
                kind: kind,
                run: RunKey(repository: row.string(1) ?? "", runID: row.int(2) ?? 0, attempt: row.int(3) ?? 1),
                environment: row.string(4), recipient: row.string(5), surface: row.string(6) ?? "",
                createdAt: row.double(7) ?? 0, expiresAt: row.double(8) ?? 0)
        }.first ?? nil
    }

    /// Spends every token bound to the same action on the same attempt and environment (a card
    /// and a notification may both carry one, and a button re-issued carries another): an action
    /// is done once, whichever copy was pressed.
    public func spendActionTokens(like binding: ActionBinding, at now: UnixTime) throws {
        try store.run(
            """
            UPDATE action_tokens SET used_at = ?
            WHERE repository = ? AND run_id = ? AND attempt = ? AND action IN (?, ?) AND used_at IS NULL
                AND environment IS NOT DISTINCT FROM ?
            """,
            [
                .real(now), .text(binding.run.repository), .int(binding.run.runID), .int(binding.run.attempt),
                .text(binding.kind.rawValue), .text(Self.counterpart(binding.kind).rawValue),
                .string(binding.environment),
            ])
    }

    /// Approve and reject answer the same review: pressing one spends the other.
    static func counterpart(_ kind: ActionKind) -> ActionKind {
        switch kind {
        case .approve: .reject
        case .reject: .approve
        default: kind
        }
    }

    /// When the newest live token for `kind` on `run` expires; nil when none is live.
    public func liveTokenExpiry(_ kind: ActionKind, run: RunKey, at now: UnixTime) throws -> UnixTime? {
        try store.queryOne(
            """
            SELECT max(expires_at) FROM action_tokens
            WHERE repository = ? AND run_id = ? AND attempt = ? AND action = ? AND used_at IS NULL AND expires_at > ?
            """, [.text(run.repository), .int(run.runID), .int(run.attempt), .text(kind.rawValue), .real(now)]
        ) { $0.double(0) } ?? nil
    }

    /// Whether storage has an attempt of the run newer than `key`'s (a primary-key range read).
    public func hasNewerAttempt(than key: RunKey) throws -> Bool {
        try store.queryOne(
            "SELECT 1 FROM runs WHERE repository = ? AND run_id = ? AND attempt > ? LIMIT 1",
            [.text(key.repository), .int(key.runID), .int(key.attempt)]
        ) { _ in true } ?? false
    }

    /// Records a press, before anything is asked of GitHub; returns its id. `instance` names the
    /// instance asking GitHub (`BridgeService.instance`): only it marks the press `interrupted`
    /// when it starts again.
    public func insertAction(
        _ binding: ActionBinding, person: String, state: ActionRecord.State, detail: String?,
        instance: String? = nil, at now: UnixTime
    ) throws -> Int64 {
        try store.insertReturningID(
            """
            INSERT INTO actions (action, repository, run_id, attempt, environment, person, surface, pressed_at, state,
                detail, finished_at, instance)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(binding.kind.rawValue), .text(binding.run.repository), .int(binding.run.runID),
                .int(binding.run.attempt), .string(binding.environment), .text(person), .text(binding.surface),
                .real(now), .text(state.rawValue), .string(detail), state == .requested ? .null : .real(now),
                .string(instance),
            ])
    }

    /// Records GitHub's answer to a press.
    public func finishAction(_ id: Int64, state: ActionRecord.State, status: Int?, detail: String?, at now: UnixTime)
        throws
    {
        try store.run(
            "UPDATE actions SET state = ?, github_status = ?, detail = ?, finished_at = ? WHERE id = ?",
            [.text(state.rawValue), .int(status), .string(detail), .real(now), .int64(id)])
    }

    /// Presses still `requested`, oldest first (a partial index holds only those): the few being
    /// asked of GitHub right now, or cut off by a stop. The limit is far above any real count.
    public func requestedActions(limit: Int = 1_000) throws -> [ActionRecord] {
        try store.query(
            "SELECT \(Self.actionColumns) FROM actions WHERE state = 'requested' ORDER BY id LIMIT ?",
            [.integer(Int64(limit))], Self.actionRecord)
    }

    /// Presses still `requested` that `instance` recorded: at its start these were cut off by its
    /// stop and become `interrupted` (GitHub may or may not have done them; asking twice could do
    /// them twice). Presses another instance recorded are left alone: on a shared database that
    /// instance may be asking GitHub right now. Presses recorded before instances were named (no
    /// `instance`) are anyone's. Nil `instance` takes every one: SQLite, whose one instance
    /// recorded them all. Few, and read once.
    public func interruptRequestedActions(recordedBy instance: String?, at now: UnixTime) throws -> [ActionRecord] {
        let cut = try requestedActions().filter { instance == nil || $0.instance == nil || $0.instance == instance }
        guard !cut.isEmpty else { return [] }
        let update = """
            UPDATE actions SET state = 'interrupted', finished_at = ?,
                detail = 'the bridge stopped before GitHub answered; not asked again'
            WHERE state = 'requested'
            """
        if let instance {
            try store.run(update + " AND (instance IS NULL OR instance = ?)", [.real(now), .text(instance)])
        } else {
            try store.run(update, [.real(now)])
        }
        return cut
    }

    /// Every press for the run's attempts, by attempt and then in order: `explain`, `runs show`.
    public func actions(repository: String, runID: Int) throws -> [ActionRecord] {
        try store.query(
            "SELECT \(Self.actionColumns) FROM actions WHERE repository = ? AND run_id = ? ORDER BY attempt, id",
            [.text(repository), .int(runID)], Self.actionRecord)
    }

    /// The newest presses, newest first: the status page and `/api/actions`.
    public func recentActions(limit: Int = 20) throws -> [ActionRecord] {
        try store.query(
            "SELECT \(Self.actionColumns) FROM actions ORDER BY pressed_at DESC, id DESC LIMIT ?",
            [.integer(Int64(limit))], Self.actionRecord)
    }

    /// How long a dead token's row is kept past its expiry: long enough that the status page can
    /// count what was minted today, short enough that the table follows the buttons on screens.
    public static let actionTokenRetention: UnixTime = 86_400

    /// Removes up to `limit` tokens that expired before `cutoff`. Returns how many.
    @discardableResult
    public func pruneActionTokens(expiredBefore cutoff: UnixTime, limit: Int = retentionBatchSize) throws -> Int {
        try deleteBatch(from: "action_tokens", olderThan: cutoff, in: "expires_at", limit: limit)
    }

    /// Removes up to `limit` audit rows of presses before `cutoff` (the runs' retention). Returns how many.
    @discardableResult
    public func pruneActions(pressedBefore cutoff: UnixTime, limit: Int = retentionBatchSize) throws -> Int {
        try deleteBatch(from: "actions", olderThan: cutoff, in: "pressed_at", limit: limit)
    }

    static let actionColumns = """
        id, action, repository, run_id, attempt, environment, person, surface, pressed_at, state, github_status,
        detail, finished_at, instance
        """

    static func actionRecord(_ row: StoreRow) -> ActionRecord {
        ActionRecord(
            id: row.int64(0) ?? 0, kind: ActionKind(rawValue: row.string(1) ?? "") ?? .rerun,
            run: RunKey(repository: row.string(2) ?? "", runID: row.int(3) ?? 0, attempt: row.int(4) ?? 1),
            environment: row.string(5), person: row.string(6) ?? "", surface: row.string(7) ?? "",
            pressedAt: row.double(8) ?? 0, state: ActionRecord.State(rawValue: row.string(9) ?? "") ?? .requested,
            githubStatus: row.int(10), detail: row.string(11), finishedAt: row.double(12),
            instance: row.string(13))
    }
}
