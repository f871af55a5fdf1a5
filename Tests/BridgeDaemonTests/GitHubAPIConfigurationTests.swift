import BridgeCore
import BridgeDaemon
import Foundation
import Testing

/// `github.api` as `serve` loads it: the token from the environment, a file or a credential; the
/// problems that refuse a start; what `check-config` prints (never the token).
@Suite("github.api loading")
struct GitHubAPIConfigurationTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("github-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func load(_ api: String?, environment: [String: String] = [:]) throws(ConfigurationError) -> BridgeConfiguration {
        let path = directory.appendingPathComponent("config.json").path
        let github = api.map { #", "api": \#($0)"# } ?? ""
        let text = #"{"github": {"webhook_secrets": ["0123456789abcdef0123"]\#(github)}}"#
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return try ConfigurationLoader.load(path: path, environment: environment)
    }

    @Test("the token comes from the credential, then PUSHWARD_GITHUB_TOKEN_FILE, then the variable, over the file's")
    func tokenSources() throws {
        let file = directory.appendingPathComponent("token").path
        _ = FileManager.default.createFile(atPath: file, contents: Data("from-file\n".utf8))
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("credentials"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(
            atPath: directory.appendingPathComponent("credentials/github_token").path,
            contents: Data("from-credential\n".utf8))
        let api = #"{"token": "in-config", "hooks": ["orgs/acme/hooks/2"]}"#
        #expect(try load(api).githubAPI?.credential == .token("in-config"))
        #expect(
            try load(api, environment: ["PUSHWARD_GITHUB_TOKEN": "from-variable"]).githubAPI?.credential
                == .token("from-variable"))
        #expect(
            try load(api, environment: ["PUSHWARD_GITHUB_TOKEN": "v", "PUSHWARD_GITHUB_TOKEN_FILE": file])
                .githubAPI?.credential == .token("from-file"))
        #expect(
            try load(
                api,
                environment: [
                    "PUSHWARD_GITHUB_TOKEN_FILE": file,
                    "CREDENTIALS_DIRECTORY": directory.appendingPathComponent("credentials").path,
                ]
            ).githubAPI?.credential == .token("from-credential"))
        // Without the section a token turns nothing on.
        #expect(try load(nil, environment: ["PUSHWARD_GITHUB_TOKEN": "v"]).githubAPI == nil)
        // A token from the environment cannot read the App's own hook.
        #expect(throws: ConfigurationError.self) {
            try load(
                #"{"app_id": 1, "private_key_file": "/k.pem", "hooks": ["app"]}"#,
                environment: ["PUSHWARD_GITHUB_TOKEN": "v"])
        }
    }

    @Test("an App's private key from the systemd credential github_app_private_key wins over private_key_file")
    func appKeyCredential() throws {
        let credentials = directory.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        let api = #"{"app_id": 5, "private_key_file": "/etc/pushward-bridge/app.pem", "hooks": ["app"]}"#
        #expect(try load(api).githubAPI?.credential == .app(id: 5, privateKeyFile: "/etc/pushward-bridge/app.pem"))
        #expect(
            try load(api, environment: ["CREDENTIALS_DIRECTORY": credentials.path]).githubAPI?.credential
                == .app(id: 5, privateKeyFile: "/etc/pushward-bridge/app.pem"), "no such credential: the file stays")
        _ = FileManager.default.createFile(
            atPath: credentials.appendingPathComponent("github_app_private_key").path, contents: Data("pem".utf8))
        #expect(
            try load(api, environment: ["CREDENTIALS_DIRECTORY": credentials.path]).githubAPI?.credential
                == .app(id: 5, privateKeyFile: credentials.path + "/github_app_private_key"))
    }

    @Test("no credential, or an unreadable private key, refuses the start naming the key; no hooks is a warning")
    func servingProblems() throws {
        let none = try load(#"{"hooks": ["orgs/acme/hooks/2"]}"#)
        #expect(ConfigurationLoader.servingProblems(none).map(\.key) == ["github.api"])
        let missingKey = directory.appendingPathComponent("missing.pem").path
        let app = try load(#"{"app_id": 7, "private_key_file": "\#(missingKey)", "hooks": ["app"]}"#)
        let problems = ConfigurationLoader.servingProblems(app)
        #expect(problems.map(\.key) == ["github.api.private_key_file"])
        #expect(problems.first?.problem.contains(missingKey) == true)
        // Readable, but a certificate: check-config says so before the start would.
        let certificate = directory.appendingPathComponent("cert.pem").path
        _ = FileManager.default.createFile(
            atPath: certificate, contents: Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8))
        let notAKey = ConfigurationLoader.servingProblems(
            try load(#"{"app_id": 7, "private_key_file": "\#(certificate)", "hooks": ["app"]}"#))
        #expect(notAKey.map(\.key) == ["github.api.private_key_file"])
        #expect(notAKey.first?.problem.contains("BEGIN RSA PRIVATE KEY") == true)
        let noHooks = try load(#"{"token": "t"}"#)
        #expect(ConfigurationLoader.servingProblems(noHooks).isEmpty)
        #expect(ConfigurationLoader.servingWarnings(noHooks).contains { $0.contains("github.api lists no hooks") })
        #expect(ConfigurationLoader.servingWarnings(try load(nil)).allSatisfy { !$0.contains("github.api") })
    }

    @Test("check-config shows the section with the token masked")
    func described() throws {
        let configuration = try load(#"{"token": "github_pat_SECRET", "hooks": ["repos/acme/rocket/hooks/1"]}"#)
        let text = ConfigurationLoader.describe(configuration).canonicalString
        #expect(!text.contains("github_pat_SECRET"))
        let api = ConfigurationLoader.describe(configuration).objectValue?["github"]?.objectValue?["api"]
        #expect(api?.objectValue?["hooks"] == .array([.string("repos/acme/rocket/hooks/1")]))
        #expect(api?.objectValue?["token"]?.stringValue?.hasPrefix("********") == true)
        #expect(ConfigurationLoader.describe(try load(nil)).objectValue?["github"]?.objectValue?["api"] == .null)
    }
}
