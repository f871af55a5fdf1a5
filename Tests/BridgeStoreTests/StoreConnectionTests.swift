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

    @Test func keepsSQLitesNumberedParametersAndNumbersBareOnesAfterThem() {
        #expect(
            StoreConnection.numberingParameters("UPDATE t SET a = ?4 WHERE b = ?1 AND c = ?12 AND d != ?4")
                == "UPDATE t SET a = $4 WHERE b = $1 AND c = $12 AND d != $4")
        #expect(StoreConnection.numberingParameters("a = ?2, b = ?, c = ?") == "a = $2, b = $3, c = $4")
        #expect(StoreConnection.numberingParameters("x IN (?,?)") == "x IN ($1,$2)")
        #expect(StoreConnection.numberingParameters("x = ?") == "x = $1")
    }
}
