import BridgeCore
import Foundation
import Testing

/// The `database` setting: which engine it selects, what is refused, and what may be shown.
@Suite("database location")
struct DatabaseLocationTests {
    @Test(
        "a path, relative, absolute or with a colon, is an SQLite file",
        arguments: [
            "var/pushward-bridge.sqlite", "/var/lib/pushward-bridge/state.sqlite", "a:b.sqlite", "C:\\bridge.sqlite",
            "/srv/odd://name.sqlite", "état/ベース.sqlite", "./postgresql:/x",
        ])
    func pathsAreSQLite(text: String) throws {
        #expect(try DatabaseLocation(parsing: text) == .sqlite(path: text))
    }

    @Test(
        "postgresql:// and postgres:// (any case) select PostgreSQL, kept as given",
        arguments: [
            "postgresql://bridge@db.internal/bridge?sslmode=require", "postgres://localhost",
            "PostgreSQL://u:p@[::1]:5432/db", "postgresql:///bridge?host=/run/postgresql",
        ])
    func postgresURIs(text: String) throws {
        #expect(try DatabaseLocation(parsing: text) == .postgresql(uri: text))
    }

    @Test(
        "any other scheme:// is refused, naming the scheme and both accepted forms",
        arguments: [
            "mysql://db/bridge", "postgressql://db/bridge", "sqlite://var/x.sqlite", "file:///tmp/x", "x-1.a+b://y",
        ])
    func otherSchemesAreRefused(text: String) {
        let scheme = String(text.prefix { $0 != ":" })
        #expect {
            _ = try DatabaseLocation(parsing: text, key: "PUSHWARD_DATABASE")
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.key == "PUSHWARD_DATABASE" && error.problem.contains("\"\(scheme)://\"")
                && error.problem.contains("file path") && error.problem.contains("postgresql://")
        }
    }

    @Test("an empty setting is refused rather than opened as a file with no name")
    func emptyIsRefused() {
        #expect(throws: ConfigurationError.self) { try DatabaseLocation(parsing: "") }
    }

    @Test(
        "the shown form hides a password in the user part or a password= parameter, whatever it holds",
        arguments: [
            ("postgresql://bridge:s3cret@db/bridge", "postgresql://bridge:***@db/bridge"),
            ("postgresql://bridge:p@ss:w%40rd@db:5432/bridge", "postgresql://bridge:***@db:5432/bridge"),
            ("postgres://u:пароль🔑\u{202E}@h/d?sslmode=require", "postgres://u:***@h/d?sslmode=require"),
            (
                "postgresql://h/d?sslmode=require&PassWord=x&user=u",
                "postgresql://h/d?sslmode=require&PassWord=***&user=u"
            ),
            ("postgresql://h?password=a&password=b", "postgresql://h?password=***&password=***"),
            ("postgresql://bridge@[::1]:5432/bridge", "postgresql://bridge@[::1]:5432/bridge"),
            ("postgresql://[::1]:5432/bridge", "postgresql://[::1]:5432/bridge"),
        ])
    func redaction(uri: String, shown: String) throws {
        let location = try DatabaseLocation(parsing: uri)
        #expect(location.redacted == shown)
    }

    @Test("an SQLite path is shown as it is")
    func pathShownAsIs() throws {
        #expect(try DatabaseLocation(parsing: "/var/lib/b.sqlite").redacted == "/var/lib/b.sqlite")
    }

    @Test("the configuration file's database is checked when it is read")
    func configurationFileRefusesOtherSchemes() {
        #expect {
            _ = try BridgeConfiguration(json: Data(#"{"database": "mysql://db/bridge"}"#.utf8))
        } throws: { error in
            (error as? ConfigurationError)?.key == "database"
        }
    }
}
