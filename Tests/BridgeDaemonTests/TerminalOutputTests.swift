import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the binary writes depends on whether a person is watching: run under a pseudo-terminal
/// (`script` from util-linux), `serve` logs text lines and `check-config` indents; with files for
/// stdout and stderr, JSON lines and one line of JSON. `log_format` overrides the choice.
@Suite("Terminal or not", .serialized, .timeLimit(.minutes(2)))
struct TerminalOutputTests {
    static let secret = "terminal-secret-0123456789"

    /// A dry-run configuration whose database path holds an ESC sequence and a bidi override: the
    /// start line names it, so it shows how payload-like text reaches the terminal.
    static func config(_ directory: ScratchDirectory, format: String? = nil) throws -> String {
        let database = directory.path("bridge\u{1B}[31m\u{202E}.sqlite")
        let escapedDatabase = JSONValue.string(database).canonicalString
        return try directory.write(
            "config-\(format ?? "unset").json",
            """
            {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": \(escapedDatabase),
             \(format.map { #""log_format": "\#($0)","# } ?? "") "github": {"webhook_secrets": ["\(secret)"]}}
            """)
    }

    static func quoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Runs the binary (after `wrapped`, such as `timeout`) with its stdin, stdout and stderr on a
    /// pseudo-terminal; what the terminal showed (stdout and stderr together), `\r\n` as `\n`.
    static func underTerminal(_ arguments: [String], in directory: ScratchDirectory, wrapped: [String] = [])
        throws -> String
    {
        let command = (wrapped + [BridgeProcess.binary.path] + arguments).map(quoted).joined(separator: " ")
        let output = directory.path("terminal-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let process = try SpawnedProcess(
            executable: "/usr/bin/script", arguments: ["-qec", command, "/dev/null"],
            environment: BridgeProcess.baseEnvironment, directory: directory.url.path, standardInput: .null,
            standardOutput: .file(output), standardError: .null)
        guard process.wait(timeout: 30) else {
            _ = process.send(SIGKILL)
            throw TestFailure("script \(command) did not finish within 30 s")
        }
        return ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").replacingOccurrences(
            of: "\r\n", with: "\n")
    }

    /// `serve` under a terminal for a few seconds, stopped by SIGTERM (`timeout`), as it showed.
    static func serveUnderTerminal(config: String, in directory: ScratchDirectory) throws -> [String] {
        try underTerminal(["serve", "--config", config], in: directory, wrapped: ["timeout", "-s", "TERM", "4"])
            .split(separator: "\n").map(String.init)
    }

    /// `serve` with stderr a file: its lines once it logged its port, then stopped.
    static func serveToFile(config: String, in directory: ScratchDirectory) throws -> [String] {
        let child = try BridgeProcess(["serve", "--config", config], in: directory)
        defer { child.ensureStopped() }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !child.stderrText.contains("listening for GitHub webhooks"), child.process.isRunning {
            usleep(20_000)
        }
        kill(child.pid, SIGTERM)
        _ = child.waitForExit(timeout: 10)
        return child.stderrText.split(separator: "\n").map(String.init)
    }

    /// Whether `line` starts as a text log line does: `2026-12-06T22:00:00.000Z NOTICE  message`.
    static func isTextLine(_ line: String) -> Bool {
        line.prefixMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|NOTICE|WARNING|ERROR) +\S/#) != nil
    }

    @Test("serve on a terminal writes time level message key=value lines, the database path's controls escaped")
    func serveTextOnTerminal() throws {
        let directory = try ScratchDirectory()
        let lines = try Self.serveUnderTerminal(config: try Self.config(directory), in: directory)
        let listening = try #require(lines.first { $0.contains("listening for GitHub webhooks") }, "\(lines)")
        #expect(Self.isTextLine(listening), "\(listening)")
        #expect(listening.contains(" NOTICE "))
        #expect(listening.contains("http.port="))
        #expect(listening.contains(#"\u{1B}[31m\u{202E}.sqlite"#), "\(listening)")
        #expect(!lines.contains { $0.hasPrefix("{") }, "no JSON line on a terminal: \(lines)")
        #expect(!lines.joined().unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" })
    }

    @Test("serve with stderr a file writes JSON lines; log_format forces either way")
    func serveJSONOtherwise() throws {
        let directory = try ScratchDirectory()
        let lines = try Self.serveToFile(config: try Self.config(directory), in: directory)
        #expect(lines.contains { $0.contains("listening for GitHub webhooks") }, "\(lines)")
        #expect(!lines.isEmpty && lines.allSatisfy { (try? JSONValue(parsing: Data($0.utf8)))?.objectValue != nil })

        let forcedJSON = try Self.serveUnderTerminal(config: try Self.config(directory, format: "json"), in: directory)
        let listening = try #require(forcedJSON.first { $0.contains("listening for GitHub webhooks") })
        #expect((try? JSONValue(parsing: Data(listening.utf8)))?["msg"] == "listening for GitHub webhooks")

        let forcedText = try Self.serveToFile(config: try Self.config(directory, format: "text"), in: directory)
        let line = try #require(forcedText.first { $0.contains("listening for GitHub webhooks") }, "\(forcedText)")
        #expect(Self.isTextLine(line), "\(line)")
    }

    @Test("check-config indents its JSON on a terminal and prints one line otherwise")
    func checkConfigIndents() async throws {
        let directory = try ScratchDirectory()
        let config = try Self.config(directory)
        let shown = try Self.underTerminal(["check-config", "--config", config], in: directory)
        #expect(shown.contains("{\n  \"actions\": null,\n  \"activity\": {\n    \"completion_grace\": "), "\(shown)")
        let piped = try await BridgeProcess.run(["check-config", "--config", config], in: directory)
        #expect(piped.status == 0)
        let firstLine = try #require(piped.stdout.split(separator: "\n").first)
        #expect(firstLine.hasPrefix("{\"actions\":null,\"activity\":{"))
        #expect(piped.json?["log_format"] != nil)
        // The same document either way.
        let jsonPart = shown.drop { $0 != "{" }
        let end = try #require(jsonPart.range(of: "\n}", options: .backwards))
        #expect(
            try JSONValue(parsing: Data(jsonPart[..<end.upperBound].utf8))
                == JSONValue(parsing: Data(firstLine.utf8)))
    }
}
