import BridgeCore
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeDaemon

/// With `github.api`, a failure alert quotes the error GitHub annotated on the failed job, read
/// from the fake GitHub's `GET …/check-runs/{id}/annotations` as the alert goes out.
@Suite("Failure annotations end to end", .serialized, .timeLimit(.minutes(3)))
struct FailureAnnotationEndToEndTests {
    /// The failing run: `lint` passes, `test (linux)` fails (job ids from `runID * 100`).
    static func failingRun(_ runID: Int) -> [WebhookEvent] {
        ActionEndToEndTests.script(runID).deliveries(waves: ActionEndToEndTests.failing)
    }

    /// GitHub's closing line, on every failed step.
    static let closing: JSONValue = [
        "path": ".github", "start_line": 1, "end_line": 1, "annotation_level": "failure", "title": "",
        "message": "Process completed with exit code 1.", "raw_details": "",
    ]

    static func annotation(_ message: String, path: String, line: Int) -> JSONValue {
        [
            "path": .string(path), "start_line": .number(Double(line)), "end_line": .number(Double(line)),
            "annotation_level": "failure", "title": "", "message": .string(message), "raw_details": "",
        ]
    }

    static func annotationsPath(_ checkRun: Int) -> String {
        "/repos/acme/widgets/check-runs/\(checkRun)/annotations"
    }

    @Test("the failure alert quotes the failed job's first real error, asked once, and the card is unchanged")
    func quoted() async throws {
        let bridge = try ActionEndToEndTests.Bridge(topLevel: #""alerts": {},"#)
        let failedJob = 2_101
        bridge.github.setAnnotations(
            repository: "acme/widgets", checkRunID: failedJob,
            [
                Self.closing,
                Self.annotation(
                    "AssertionError: expected 2, got 3", path: "tests/test_app.py", line: 12),
            ])
        await bridge.deliver(Self.failingRun(21))
        #expect(await ActionEndToEndTests.eventually { bridge.pushward.acceptedNotifications.count == 1 })
        let alert = try #require(bridge.pushward.acceptedNotifications.first)
        let body = try #require(alert.body["body"]?.stringValue)
        #expect(body.hasSuffix("tests/test_app.py:12: AssertionError: expected 2, got 3"), "\(body)")
        #expect(!body.contains("Process completed"))
        let asked = bridge.github.requests.filter { $0.path.contains("/annotations") }
        #expect(asked.map(\.path) == [Self.annotationsPath(failedJob)], "the failed job's, once")
        // The card says the failure as before: the quote is the alert's.
        #expect(await ActionEndToEndTests.eventually { bridge.card?.state == "ended" })
        #expect(bridge.card?.content["state"]?.stringValue?.hasPrefix("Failed: test (linux)") == true)
        // What was sent is what the store says was sent, once the answer is recorded (after
        // PushWard answered, so waited for).
        let reader = try BridgeDatabase(path: bridge.databasePath, readOnly: true)
        #expect(
            await ActionEndToEndTests.eventually {
                let stored = try? reader.alerts(repository: "acme/widgets", runID: 21)
                return stored?.first { $0.reason == .failure }?.body.contains("AssertionError") == true
            })
        await bridge.daemon.shutdown()
    }

    @Test("no annotation GitHub can give (unknown check run, only the closing line): the alert goes as planned")
    func withoutQuote() async throws {
        let bridge = try ActionEndToEndTests.Bridge(topLevel: #""alerts": {},"#)
        bridge.github.setAnnotations(repository: "acme/widgets", checkRunID: 2_201, [Self.closing])
        await bridge.deliver(Self.failingRun(22))
        // Run 23's failed job is unknown to GitHub's checks: 404.
        await bridge.deliver(Self.failingRun(23))
        #expect(await ActionEndToEndTests.eventually { bridge.pushward.acceptedNotifications.count == 2 })
        for alert in bridge.pushward.acceptedNotifications {
            let body = alert.body["body"]?.stringValue ?? ""
            #expect(!body.contains("Process completed") && !body.contains(".github"), "\(body)")
        }
        #expect(bridge.github.requests.filter { $0.path.contains("/annotations") }.count == 2)
        await bridge.daemon.shutdown()
    }
}
