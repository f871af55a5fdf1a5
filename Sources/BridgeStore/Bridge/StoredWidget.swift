import BridgeCore
import Foundation

/// `widgets`: one row per configured home-screen widget, its `WidgetSession` as JSON. Read whole
/// at start and by the status page (a handful of rows: PushWard allows 50 widgets an account).
extension BridgeDatabase {
    /// Writes a widget's state (an upsert on the slug).
    public func saveWidget(_ session: WidgetSession, at now: UnixTime) throws {
        try store.run(
            """
            INSERT INTO widgets (slug, session, updated_at) VALUES (?, ?, ?)
            ON CONFLICT (slug) DO UPDATE SET session = excluded.session, updated_at = excluded.updated_at
            """, [.text(session.slug), .text(try json(session)), .real(now)])
    }

    /// Every widget's state, by slug (at most `limit`, far above PushWard's 50).
    public func widgets(limit: Int = 1_000) throws -> [WidgetSession] {
        let rows = try store.query(
            "SELECT session FROM widgets ORDER BY slug LIMIT ?", [.integer(Int64(limit))]
        ) { $0.string(0) ?? "" }
        return try rows.map { try decode(WidgetSession.self, $0) }
    }
}
