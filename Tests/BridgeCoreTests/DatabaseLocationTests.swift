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

    /// Generated passwords as password managers make them: each with characters a URL parser
    /// and libpq's own read differently. Every alphanumeric run is unique, so a fragment shown is
    /// found.
    static let passwords = [
        "Xy9?kQ2#vB7", "Wm3/Ht8", "Pq5@Lr6", "Zn4%Jd2", "Cv7 Bn3", "Rt1'Ys6\"Gh8", "Kp2:Mq9", "Fe3&Dw5=Ux1",
    ]

    /// The fragments of `password` a leak would show: its runs of letters and digits.
    static func fragments(_ password: String) -> [String] {
        password.split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    @Test("a password with ?, #, /, @, %, a space or quotes: no fragment shown, in URI or key=value form")
    func libpqGrammar() throws {
        for password in Self.passwords {
            let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
            let quoted =
                "'"
                + password.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "'", with: "\\'") + "'"
            let forms = [
                "postgresql://bridge:\(password)@127.0.0.1:1/bridge",
                "postgresql://bridge:\(encoded)@127.0.0.1:1/bridge?sslmode=require",
                "postgresql://127.0.0.1:1/bridge?user=bridge&password=\(encoded)",
                "host=127.0.0.1 port=1 user=bridge password=\(quoted) dbname=bridge",
                "host=db.example.com password = \(quoted)  sslmode=verify-full",
            ]
            for text in forms {
                let location = try DatabaseLocation(parsing: text)
                guard case .postgresql = location else {
                    Issue.record("\(text) is not read as PostgreSQL")
                    continue
                }
                for fragment in Self.fragments(password) {
                    #expect(!location.redacted.contains(fragment), "\(text) → \(location.redacted)")
                }
                #expect(location.redacted.contains("***"))
            }
            // Read as libpq reads them: the password percent-decoded or unquoted.
            #expect(PostgresConnectionString("postgresql://bridge:\(encoded)@h/d")?.parameters["password"] == password)
            #expect(PostgresConnectionString("password=\(quoted) host=h")?.parameters["password"] == password)
        }
    }

    @Test("key=value strings are PostgreSQL only when every key is libpq's; the hosts and sslmode are read")
    func keywordForm() throws {
        #expect(try DatabaseLocation(parsing: "var/a=b.sqlite") == .sqlite(path: "var/a=b.sqlite"))
        #expect(try DatabaseLocation(parsing: "host=db dbname=bridge") == .postgresql(uri: "host=db dbname=bridge"))
        let remote = try #require(PostgresConnectionString("host=db.example.com,db2 dbname=b"))
        #expect(remote.hosts == ["db.example.com", "db2"] && !remote.isLocal && !remote.requiresTLS)
        #expect(PostgresConnectionString("postgresql://u@db.example.com/b?sslmode=verify-full")?.requiresTLS == true)
        #expect(PostgresConnectionString("postgresql://u@127.0.0.1:5432/b")?.isLocal == true)
        #expect(PostgresConnectionString("postgresql:///b?host=/var/run/postgresql")?.isLocal == true)
        #expect(PostgresConnectionString("postgresql://a,b.example.com:5433/d")?.hosts == ["a", "b.example.com"])
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
