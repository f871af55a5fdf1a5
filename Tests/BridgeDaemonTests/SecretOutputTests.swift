import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// No secret in any output: the PostgreSQL password (whatever characters it holds, in a URI or a
/// key=value string), the webhook secrets, the PushWard key, the GitHub token and the admin token
/// never appear in what `check-config`, a `serve` that cannot start, or the CLI print.
@Suite("secrets in output", .serialized, .timeLimit(.minutes(3)))
struct SecretOutputTests {
    /// Each alphanumeric run is unique, so a fragment of a secret that leaks is found.
    static let passwords = ["Xy9?kQ2#vB7", "Wm3/Ht8", "Pq5@Lr6", "Zn4%Jd2", "Cv7 Bn3", "Rt1'Ys6\"Gh8"]
    static let others = [
        "Aa1Bb2Cc3Dd4Ee5Ff6Gg7", "hlk_Key1Key2Key3Key4", "Tk9Tk8Tk7Tk6Tk5", "Qq1Qq2Qq3Qq4Qq5Qq6Qq7Qq8Qq9Qq0Qq1",
    ]

    /// The fragments a leak of `secret` would show (PushWard's public key prefix aside).
    static func fragments(_ secret: String) -> [String] {
        secret.split { !$0.isLetter && !$0.isNumber }.map(String.init).filter { $0.count >= 3 && $0 != "hlk" }
    }

    /// libpq's two forms of a location whose server (port 1) never answers.
    static func locations(_ password: String) -> [String] {
        let quoted =
            "'" + password.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        return [
            "postgresql://bridge:\(password)@127.0.0.1:1/bridge",
            "host=127.0.0.1 port=1 user=bridge password=\(quoted) dbname=bridge",
        ]
    }

    static func configuration(in directory: ScratchDirectory) throws -> String {
        try directory.write(
            "config.json",
            """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "unused.sqlite",
             "admin_token": "\(others[3])",
             "github": {"webhook_secrets": ["\(others[0])"], "api": {"token": "\(others[2])"}},
             "pushward": {"url": "http://127.0.0.1:1", "api_key": "\(others[1])", "budget": "unlimited"}}
            """)
    }

    @Test("check-config, a serve that cannot connect and the CLI show no fragment of any secret")
    func noSecretInAnyOutput() async throws {
        let directory = try ScratchDirectory()
        let config = try Self.configuration(in: directory)
        for password in Self.passwords {
            for location in Self.locations(password) {
                let environment = ["PUSHWARD_DATABASE": location]
                let runs: [(String, [String])] = [
                    ("check-config", ["check-config", "--config", config]),
                    ("serve", ["serve", "--config", config]),
                    ("runs list", ["runs", "list", "--config", config]),
                    ("runs list --database", ["runs", "list", "--database", location]),
                    ("explain", ["explain", "1", "--config", config]),
                ]
                for (name, arguments) in runs {
                    let result = try await BridgeProcess.run(arguments, environment: environment, in: directory)
                    #expect(result.reason == .exit, "\(name) crashed")
                    let output = result.stdout + result.stderr
                    for secret in [password] + Self.others {
                        for fragment in Self.fragments(secret) {
                            #expect(!output.contains(fragment), "\(name) with \(location) shows \(fragment): \(output)")
                        }
                    }
                    if name != "check-config" {
                        #expect(result.status != 0, "\(name) cannot reach the database")
                        #expect(output.contains("***"), "\(name) names the location, redacted: \(output)")
                    }
                }
            }
        }
    }

    @Test("a remote PostgreSQL without sslmode require or verify-full: one warning in check-config and at start")
    func plaintextPostgresIsWarned() async throws {
        let directory = try ScratchDirectory()
        let config = try Self.configuration(in: directory)
        // 0.0.0.0 is not a loopback name, so it is warned about, yet a connection to it stays on
        // this machine (and is refused on port 1): no test sends anything off it.
        for (location, warned) in [
            ("postgresql://bridge@0.0.0.0:1/bridge", true),
            ("host=0.0.0.0 port=1 dbname=bridge sslmode=prefer", true),
            ("postgresql://bridge@0.0.0.0:1/bridge?sslmode=verify-full", false),
            ("postgresql://bridge@127.0.0.1:1/bridge", false),
        ] {
            for command in ["check-config", "serve"] {
                let result = try await BridgeProcess.run(
                    [command, "--config", config], environment: ["PUSHWARD_DATABASE": location], in: directory)
                let said = (result.stdout + result.stderr).components(separatedBy: "checks no certificate").count - 1
                #expect(said == (warned ? 1 : 0), "\(command) \(location): \(result.stderr)")
            }
        }
    }
}
