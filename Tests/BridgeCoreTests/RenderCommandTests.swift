import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// The built `pushward-bridge` executable, run to completion through the test support's runner.
private enum BridgeBinary {
    /// Fails the test (not skips) when the binary is missing; reports a crash.
    static func run(_ arguments: [String]) throws -> BridgeProcess.Result {
        let result = try BridgeProcess.runToCompletion(arguments, in: try ScratchDirectory(), timeout: 60)
        #expect(result.reason == .exit, "pushward-bridge \(arguments) crashed")
        return result
    }
}

@Suite("render command (the built binary)", .timeLimit(.minutes(1)))
struct RenderCommandTests {
    /// One run of attempt 10: two jobs queued and completed, then the run completed.
    static let attempt10 = [
        "workflow_job.queued.attempt10-pre-commit.json",
        "workflow_job.completed.attempt10-pre-commit.json",
        "workflow_job.queued.attempt10-test.json",
        "workflow_job.completed.attempt10-test.json",
        "workflow_run.completed.attempt10.json",
    ]

    static var attempt10Paths: [String] {
        attempt10.map { Fixtures.directory.appendingPathComponent($0).path }
    }

    /// The output's lines, without the empty string after the final newline.
    private func lines(_ result: BridgeProcess.Result) -> [String] {
        var lines = result.stdout.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    @Test("the binary sits next to the test executable")
    func binaryIsBuilt() {
        let path = TestAssets.builtBinary.path
        #expect(FileManager.default.isExecutableFile(atPath: path), "missing \(path)")
    }

    @Test("render --fidelity and --budget simulate the economy; --summary says what each card and run cost")
    func renderEconomyFlags() throws {
        let run = Self.attempt10Paths
        let full = try BridgeBinary.run(["render"] + run + ["--fidelity", "full", "--summary"])
        let milestones = try BridgeBinary.run(["render"] + run + ["--fidelity", "milestones", "--summary"])
        #expect(full.status == 0 && milestones.status == 0, "\(full.stderr) \(milestones.stderr)")
        // The summary counts exactly the requests printed.
        for result in [full, milestones] {
            #expect(result.stderr.contains(": \(lines(result).count) updates (POST + PATCH)"), "\(result.stderr)")
        }
        #expect(lines(milestones).count <= 5)
        #expect(lines(milestones).count < lines(full).count)
        // The same end at both levels.
        #expect(lines(milestones).last == lines(full).last)

        // A month with 3 updates left: the planner gives the run no card, and nothing is sent.
        let spent = try BridgeBinary.run(["render"] + run + ["--budget", "250", "--used", "247", "--summary"])
        #expect(spent.status == 0, "\(spent.stderr)")
        #expect(lines(spent).isEmpty)
        #expect(spent.stderr.contains("no card, 0 updates: no card"), "\(spent.stderr)")
        let roomy = try BridgeBinary.run(["render"] + run + ["--budget", "250", "--used", "0", "--summary"])
        #expect(roomy.stderr.contains(": full, "), "\(roomy.stderr)")
        #expect(!lines(roomy).isEmpty)

        // The same run as one bar: every frame of the generic template, the same lifecycle.
        let bar = try BridgeBinary.run(["render"] + run + ["--template", "generic"])
        #expect(bar.status == 0, "\(bar.stderr)")
        let frames = lines(bar).compactMap { try? JSONValue(parsing: Data($0.utf8)) }
        #expect(frames.first?["method"] == "POST")
        #expect(frames.last?["body"] == ["state": "ended"])
        let contents = frames.compactMap { $0["body"]?["content"] }
        #expect(!contents.isEmpty && contents.allSatisfy { $0["template"] == nil || $0["template"] == "generic" })
        #expect(contents.contains { $0["template"] == "generic" })
        #expect(try BridgeBinary.run(["render"] + run + ["--template", "countdown"]).status == 64)

        let bad = try BridgeBinary.run(["render"] + run + ["--fidelity", "loud"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--fidelity must be one of"))
        #expect(try BridgeBinary.run(["render"] + run + ["--used", "3"]).status == 64)
    }

    @Test("render prints canonical JSON lines: POST first, the ended PATCH last")
    func renderAttempt10() throws {
        let result = try BridgeBinary.run(["render"] + Self.attempt10Paths)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.hasSuffix("\n"))
        let lines = lines(result)
        #expect(lines.count >= 3)

        var objects: [[String: JSONValue]] = []
        for line in lines {
            let value = try JSONValue(parsing: Data(line.utf8))
            #expect(value.canonicalString == line, "not canonical: \(line)")
            let object = try #require(value.objectValue, "not an object: \(line)")
            #expect(object.keys.sorted() == ["at", "body", "method", "path"], "keys of \(line)")
            #expect(object["at"]?.intValue != nil)
            #expect(object["body"]?.objectValue != nil)
            objects.append(object)
        }

        let first = try #require(objects.first)
        #expect(first["method"] == "POST")
        #expect(first["path"] == "/activities")
        let slug = try #require(first["body"]?["slug"]?.stringValue)
        #expect(slug.hasPrefix("gh-"))

        let last = try #require(objects.last)
        #expect(last["method"] == "PATCH")
        #expect(last["path"] == .string("/activities/\(slug)"))
        #expect(last["body"] == ["state": "ended"])

        // Everything after the POST updates that activity, in time order.
        for object in objects.dropFirst() {
            #expect(object["method"] == "PATCH")
            #expect(object["path"] == .string("/activities/\(slug)"))
        }
        let times = objects.compactMap { $0["at"]?.intValue }
        #expect(times == times.sorted())
        // Only the last request ends the activity.
        #expect(objects.dropLast().allSatisfy { $0["body"] != ["state": "ended"] })
    }

    @Test("render prints the runner-wait crossing of examples/runner-wait.jsonl: one PATCH, at runner_wait")
    func renderRunnerWait() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let result = try BridgeBinary.run(["render", root.appendingPathComponent("examples/runner-wait.jsonl").path])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let waits = lines(result).filter { $0.contains("Waiting for a runner") }
        #expect(waits.count == 1)
        let crossing = try JSONValue(parsing: Data((waits.first ?? "").utf8))
        #expect(crossing["body"]?["content"]?["state"] == "Waiting for a runner · self-hosted, arm64 · 2 min")
        // The job was created at 17:36:20Z (1730914580): noticed at 2 minutes, sent after coalesce.
        #expect(crossing["at"] == 1_730_914_710)
    }

    @Test("rendering the same input twice gives the same bytes")
    func deterministic() throws {
        let first = try BridgeBinary.run(["render"] + Self.attempt10Paths)
        let second = try BridgeBinary.run(["render"] + Self.attempt10Paths)
        #expect(first.status == 0)
        #expect(second.status == 0)
        #expect(!first.stdout.isEmpty)
        #expect(first.stdout == second.stdout)
    }

    @Test("--config applies the activity settings")
    func configApplies() throws {
        let directory = try ScratchDirectory()
        let config = try directory.write(
            "config.json", #"{"pushward": {"priority": 7, "ended_ttl": "1h"}, "activity": {"icon": "hammer"}}"#)
        let result = try BridgeBinary.run(["render", "--config", config] + Self.attempt10Paths)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = lines(result)
        let post = try JSONValue(parsing: Data(try #require(lines.first).utf8))
        #expect(post["body"]?["priority"] == 7)
        #expect(post["body"]?["dismissal_ttl"] == 3_600, "ended_ttl is how long the ended card shows")
        let frame = try JSONValue(parsing: Data(try #require(lines.dropFirst().first).utf8))
        #expect(frame["body"]?["content"]?["icon"] == "hammer")
    }

    @Test("a configured widget prints its requests: created once the run says whose it is, with its result")
    func widgets() throws {
        let directory = try ScratchDirectory()
        let config = try directory.write(
            "config.json", #"{"widgets": [{"slug": "ci", "name": "CI", "stale_after": "1h"}]}"#)
        let result = try BridgeBinary.run(["render", "--config", config] + Self.attempt10Paths)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let widget = lines(result).compactMap { try? JSONValue(parsing: Data($0.utf8)) }.filter {
            $0["path"]?.stringValue?.hasPrefix("/widgets") == true
        }
        #expect(widget.first?["method"] == "POST")
        #expect(widget.first?["body"]?["slug"] == "ci")
        #expect(widget.first?["body"]?["stale_after"] == 3_600)
        // The recording's jobs come before its only workflow_run delivery, which is the run's end:
        // a widget follows a run once it is known to be the repository's own, not a fork's.
        #expect(widget.last?["body"]?["content"]?["value"] == 1)
        #expect(widget.count == 1, "\(widget.count) widget updates for one run")
        for request in widget where request["method"] == "POST" {
            #expect(WidgetContract.postViolations(request["body"] ?? .null).isEmpty)
        }
    }

    @Test("--config with a filter that rejects the repository renders nothing")
    func configFilters() throws {
        let directory = try ScratchDirectory()
        let config = try directory.write("config.json", #"{"filters": {"repositories": {"exclude": ["foo/*"]}}}"#)
        let result = try BridgeBinary.run(["render", "--config=\(config)"] + Self.attempt10Paths)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("a missing file exits 1 and names the file on stderr")
    func missingFile() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/workflow_job.queued.json"
        let result = try BridgeBinary.run(["render", Self.attempt10Paths[0], missing])
        #expect(result.status == 1)
        #expect(result.stderr.contains(missing))
        #expect(result.stdout.isEmpty)
    }

    @Test("a recording that cannot be loaded exits 1 and names the file and line")
    func badRecording() throws {
        let directory = try ScratchDirectory()
        let recording = try directory.write(
            "run.jsonl", #"{"event": "ping", "payload": {}}"# + "\n" + #"{"event": "ping"}"# + "\n")
        let result = try BridgeBinary.run(["render", recording])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(recording): line 2"))
        #expect(result.stdout.isEmpty)
    }

    @Test("render without files is a usage error")
    func noFiles() throws {
        let result = try BridgeBinary.run(["render"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("render needs at least one FILE"))
        #expect(result.stdout.isEmpty)
    }

    @Test("an unknown option is a usage error")
    func unknownOption() throws {
        let result = try BridgeBinary.run(["render", "--frobnicate", Self.attempt10Paths[0]])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--frobnicate"))
    }

    @Test("an unknown command is a usage error", arguments: [["frobnicate"], [], ["--config"]])
    func unknownCommand(arguments: [String]) throws {
        let result = try BridgeBinary.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains("Usage: pushward-bridge"))
        #expect(result.stdout.isEmpty)
    }

    @Test("a configuration with an unknown key exits 78 and names the key")
    func badConfiguration() throws {
        let directory = try ScratchDirectory()
        let config = try directory.write("bad.json", #"{"pushward": {"priority": 2, "endedttl": "5m"}}"#)
        let result = try BridgeBinary.run(["render", "--config", config] + Self.attempt10Paths)
        #expect(result.status == 78)
        #expect(result.stderr.contains("pushward.endedttl"))
        #expect(result.stderr.contains(config))
        #expect(result.stdout.isEmpty)
    }

    @Test("a configuration file that cannot be read exits 78")
    func unreadableConfiguration() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/config.json"
        let result = try BridgeBinary.run(["render", "--config", missing] + Self.attempt10Paths)
        #expect(result.status == 78)
        #expect(result.stderr.contains(missing))
    }

    @Test("version exits 0 and prints the version")
    func version() throws {
        let result = try BridgeBinary.run(["version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("pushward-bridge "))
        #expect(result.stdout.hasSuffix("\n"))
        #expect(result.stderr.isEmpty)
    }
}
