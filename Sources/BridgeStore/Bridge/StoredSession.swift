import BridgeCore
import Foundation

/// A card as storage holds it.
public struct StoredSession: Sendable, Equatable {
    public var session: ActivitySession
    public var floor: ProgressFloor?
    /// What the core wanted shown when the card was last written.
    public var desired: JSONValue?
    public var updatedAt: UnixTime

    public init(session: ActivitySession, floor: ProgressFloor?, desired: JSONValue?, updatedAt: UnixTime) {
        self.session = session
        self.floor = floor
        self.desired = desired
        self.updatedAt = updatedAt
    }
}

/// `activities`: one row per slug, the session and its progress floor as JSON, with the desired
/// content beside them for the CLI, the admin API and the status page (the acknowledged content
/// is the session's own).
extension BridgeDatabase {
    func saveSession(_ card: StoredSession) throws {
        let session = card.session
        try store.run(
            """
            INSERT INTO activities (slug, name, owner_repository, owner_run_id, owner_attempt, phase, session,
                progress_floor, desired, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (slug) DO UPDATE SET name = excluded.name, owner_repository = excluded.owner_repository,
                owner_run_id = excluded.owner_run_id, owner_attempt = excluded.owner_attempt, phase = excluded.phase,
                session = excluded.session, progress_floor = excluded.progress_floor, desired = excluded.desired,
                updated_at = excluded.updated_at
            """,
            [
                .text(session.identity.slug), .text(session.identity.name), .string(session.owner?.repository),
                .int(session.owner?.runID), .int(session.owner?.attempt), .text(session.phase.rawValue),
                .text(try ActivitySessionJSON.text(of: session) ?? json(session)),
                try card.floor.map { .text(try json($0)) } ?? .null,
                card.desired.map { .text($0.canonicalString) } ?? .null, .real(card.updatedAt),
            ])
    }

    func desiredJSON(_ desired: DesiredActivity) -> JSONValue {
        var object: [String: JSONValue] = [
            "run": .string(desired.run.description), "content": .object(desired.content),
            "final": .bool(desired.isFinal),
        ]
        if let window = desired.window {
            object["window"] = [
                "step": .number(Double(window.step)), "estimate": .number(window.estimate),
                "started_at": window.startedAt.map { .number($0) } ?? .null,
            ]
        }
        return .object(object)
    }

    /// The card a slug names, as last written.
    public func session(slug: String) throws -> (stored: StoredSession, acknowledged: JSONValue?)? {
        try store.queryOne(
            "SELECT session, progress_floor, desired, updated_at FROM activities WHERE slug = ?",
            [.text(slug)]
        ) { row in
            let card = StoredSession(
                session: try decode(ActivitySession.self, row.string(0) ?? ""),
                floor: try row.string(1).map { try decode(ProgressFloor.self, $0) },
                desired: try row.string(2).map { try JSONValue(parsing: Data($0.utf8)) }, updatedAt: row.double(3) ?? 0)
            return (card, card.session.acknowledged.map { .object($0.content) })
        }
    }
}
