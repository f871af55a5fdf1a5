import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// The CLI's text output (`runs list`, `runs show`, `explain`, `deliveries list` and `show`) on a
/// database holding runs whose job, workflow, repository and branch names and delivery actions
/// carry terminal controls: OSC 52 (writes the clipboard), cursor movement, C1 CSI, bidi
/// overrides. None may reach the terminal raw; with colour off there is no ESC byte at all.
@Suite("CLI against hostile names", .serialized, .timeLimit(.minutes(3)))
struct CLIControlCharacterTests {
    /// What must never be written: C0 but TAB/LF/CR, ESC in particular, DEL, C1 (as UTF-8, so
    /// 0xC2 0x80–0x9F; and a lone 0x9B byte), and the bidi controls.
    static func problems(in bytes: [UInt8]) -> [String] {
        var found: [String] = []
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case 0x09, 0x0A, 0x0D: continue
            case 0x00...0x1F, 0x7F: found.append("byte 0x\(String(byte, radix: 16)) at \(index)")
            case 0x9B where index == 0 || bytes[index - 1] != 0xC2: found.append("a lone 0x9b at \(index)")
            case 0xC2 where index + 1 < bytes.count && (0x80...0x9F).contains(bytes[index + 1]):
                found.append("C1 U+00\(String(bytes[index + 1], radix: 16)) at \(index)")
            default: continue
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                found.append("bidi control U+\(String(scalar.value, radix: 16, uppercase: true))")
            default: continue
            }
        }
        return found
    }

    @Test("runs, explain and deliveries print names with their controls made visible")
    func hostileNames() async throws {
        let admin = try await AdminAPITests.Admin.start()
        do {
            try await HostileInput.fill(admin)
            try await admin.stop()
        } catch {
            try? await admin.stop()
            throw error
        }
        let database = admin.databasePath
        let directory = admin.directory
        var commands: [[String]] = [["runs", "list", "--limit", "100"], ["deliveries", "list", "--limit", "500"]]
        for index in HostileInput.strings.indices {
            for runID in [HostileInput.completedRun(index), HostileInput.activeRun(index)] {
                commands.append(["runs", "show", String(runID)])
                commands.append(["runs", "show", String(runID), "--no-color"])
                commands.append(["explain", String(runID)])
            }
            let delivery = "\(HostileInput.marker(index))-\(HostileInput.completedRun(index))"
            for id in [delivery + "-0", delivery + "-3", delivery + "-action"] {
                commands.append(["deliveries", "show", id])
                commands.append(["explain", "--delivery", id])
            }
        }
        var escapes = 0
        for command in commands {
            let result = try await BridgeProcess.run(command + ["--database", database], in: directory)
            #expect(result.reason == .exit && result.status == 0, "\(command): \(result.stderr)")
            #expect(!result.stdout.isEmpty, "\(command) printed nothing (or nothing valid as UTF-8)")
            let found = Self.problems(in: Array(result.stdout.utf8)) + Self.problems(in: Array(result.stderr.utf8))
            #expect(found.isEmpty, "\(command): \(found.prefix(8)) in \(result.stdout.debugDescription.prefix(600))")
            if result.stdout.contains("\\u{1B}") { escapes += 1 }
            if command.starts(with: ["runs", "show"]), let runID = Int(command[2]),
                let index = HostileInput.strings.indices.first(where: {
                    HostileInput.activeRun($0) == runID
                })
            {
                // The fork's run names the fork beside the branch, in its first line (the card drawn
                // below says it too, in its subtitle).
                let firstLine = result.stdout.prefix { $0 != "\n" }
                #expect(
                    firstLine.contains(" from \(HostileInput.marker(index))-fork/"),
                    "runs show \(runID) does not name its fork: \(result.stdout.prefix(300))")
            }
        }
        // The controls did reach the output, made visible.
        #expect(escapes > 0, "no command printed the hostile names' ESC as \\u{1B}")

        // On a terminal `runs show` draws the card in colour: its own SGR sequences must then be
        // the only escape sequences in the output.
        for index in HostileInput.strings.indices {
            for runID in [HostileInput.completedRun(index), HostileInput.activeRun(index)] {
                let output = try await Self.onTerminal(
                    [BridgeProcess.binary.path, "runs", "show", String(runID), "--database", database], in: directory)
                // A run counted on the summary card (more runs live than PushWard's five cards)
                // has no card of its own to draw.
                let undrawn = String(decoding: output, as: UTF8.self).contains("nothing shown on phones for this run")
                #expect(
                    undrawn || output.contains(Array("\u{1B}[".utf8)), "runs show \(runID) drew no colour on a terminal"
                )
                let found = Self.problems(in: Self.withoutColours(output))
                #expect(found.isEmpty, "runs show \(runID) on a terminal: \(found.prefix(8))")
            }
        }
    }

    /// `bytes` without the SGR sequences the CLI writes itself (`ESC [` digits and `;`, then `m`).
    static func withoutColours(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x1B, index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") {
                var end = index + 2
                while end < bytes.count, (0x30...0x39).contains(bytes[end]) || bytes[end] == UInt8(ascii: ";") {
                    end += 1
                }
                if end < bytes.count, bytes[end] == UInt8(ascii: "m") {
                    index = end + 1
                    continue
                }
            }
            result.append(bytes[index])
            index += 1
        }
        return result
    }

    /// Runs `arguments` with a pseudo-terminal as its stdout (util-linux `script`), so the CLI
    /// colours as it would for a maintainer; returns what reached the terminal.
    static func onTerminal(_ arguments: [String], in directory: ScratchDirectory) async throws -> [UInt8] {
        let output = directory.path("terminal-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let command = arguments.map { "'" + $0 + "'" }.joined(separator: " ")
        let status = try await offPool { () -> Int32 in
            let process = try SpawnedProcess(
                executable: "/usr/bin/timeout",
                arguments: ["--kill-after=5", "20", "/usr/bin/script", "-qec", command, "/dev/null"],
                environment: BridgeProcess.baseEnvironment, standardOutput: .file(output))
            // `timeout` bounds it at 25 s; this bounds `timeout`.
            guard process.wait(timeout: 40) else {
                ChildProcess.kill9(process)
                return -1
            }
            return process.terminationStatus
        }
        #expect(status == 0, "\(arguments) on a terminal exited with \(status)")
        return Array(FileManager.default.contents(atPath: output) ?? Data())
    }
}
