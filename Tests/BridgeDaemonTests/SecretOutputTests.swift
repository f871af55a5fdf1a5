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

/// An encrypted GitHub App key is refused with one clear line by `check-config` and `serve`, and
/// never makes libcrypto ask for a passphrase, even with a terminal on standard input (where
/// `check-config` used to prompt and pass while `serve` under systemd failed).
@Suite("encrypted App keys", .serialized, .timeLimit(.minutes(1)))
struct EncryptedAppKeyTests {
    @Test("check-config and serve at a terminal (script's pseudo-terminal): exit 78 naming the key, no prompt")
    func refusedWithoutPrompt() async throws {
        let directory = try ScratchDirectory()
        let key = try TestAssets.fixture("github-app/test-app.encrypted-pkcs8.pem")
        let keyPath = try directory.write("app.pem", String(decoding: key, as: UTF8.self))
        let config = try directory.write(
            "config.json",
            """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(directory.path("b.sqlite"))",
             "github": {"webhook_secrets": ["encrypted-key-secret-0123"],
                        "api": {"app_id": 7, "private_key_file": "\(keyPath)"}}}
            """)
        for command in ["check-config", "serve"] {
            // script(1) gives the child a pseudo-terminal for standard input and output, as a
            // person's shell would; the prompt, were there one, would wait there until the timeout.
            let line = "\(BridgeProcess.binary.path) \(command) --config \(config)"
            let result = try await offPool {
                try SpawnedProcessRun.toCompletion(
                    "/usr/bin/script", ["-qec", line, "/dev/null"], in: directory, timeout: 20)
            }
            #expect(result.timedOut == false, "\(command) waited: \(result.output)")
            #expect(result.status == 78, "\(command): \(result.output)")
            #expect(result.output.contains("private_key_file"), "\(result.output)")
            #expect(result.output.contains("encrypted with a passphrase"), "\(result.output)")
            #expect(!result.output.lowercased().contains("pass phrase"), "libcrypto asked: \(result.output)")
        }
    }
}

/// Runs a program to completion with its standard output and error in one file.
enum SpawnedProcessRun {
    struct Outcome {
        var status: Int32
        var timedOut: Bool
        var output: String
    }

    static func toCompletion(
        _ executable: String, _ arguments: [String], in directory: ScratchDirectory, timeout: Double
    )
        throws -> Outcome
    {
        let path = directory.path(UUID().uuidString + ".out")
        let process = try SpawnedProcess(
            executable: executable, arguments: arguments, environment: BridgeProcess.baseEnvironment,
            directory: directory.url.path, standardInput: .null, standardOutput: .file(path), standardError: .file(path)
        )
        let exited = process.wait(timeout: timeout)
        if !exited {
            _ = process.send(SIGKILL)
            _ = process.wait(timeout: 5)
        }
        let output = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return Outcome(status: exited ? process.terminationStatus : -1, timedOut: !exited, output: output)
    }
}
