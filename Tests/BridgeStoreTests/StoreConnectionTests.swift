import Testing

@testable import BridgeStore

/// How a statement written with SQLite's `?` reads on PostgreSQL.
@Suite struct StoreConnectionTests {
    @Test func numbersEachParameterOutsideStringsIdentifiersAndComments() {
        let sql = """
            SELECT '?', "a?b" FROM t -- why?
            WHERE x = ? AND y IN (?, ?) AND z = 'it''s ?'
            """
        #expect(
            StoreConnection.numberingParameters(sql) == """
                SELECT '?', "a?b" FROM t -- why?
                WHERE x = $1 AND y IN ($2, $3) AND z = 'it''s ?'
                """)
    }
}
