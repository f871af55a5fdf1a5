import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// The card is right on the phone through the whole daemon: a fork's run named with flags, a ZWJ
/// family, stacked accents and every bidi and control character reaches its end frame on the
/// fake PushWard (which counts runes as PushWard does), with no control in anything it stored;
/// and a field PushWard refuses once is dropped, recorded, and the card still ends.
@Suite("Card text end to end", .serialized, .timeLimit(.minutes(3)))
struct CardTextEndToEndTests {
    typealias Bridge = ActionEndToEndTests.Bridge

    static let hostile =
        "🇩🇪🇫🇷🇮🇹🇪🇸🇬🇧🇺🇸🇯🇵🇨🇳🇧🇷🇮🇳 deploy ⚙️ matrix (ubuntu, 3.12) 👨‍👩‍👧‍👦 e\u{301}\u{302}\u{303} "
        + "\u{202E}kcatta\u{202C}\u{2066}x\u{2069}\u{1B}[2J\u{85}\u{2028}\u{2029}\u{0}"

    static func strings(in value: JSONValue) -> [String] {
        if let text = value.stringValue { return [text] }
        if let array = value.arrayValue { return array.flatMap(strings) }
        if let object = value.objectValue { return object.values.flatMap(strings) }
        return []
    }

    /// Whether `text` holds a scalar `CardText.plain` would drop or replace (its own tests list them).
    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { CardText.plain(String($0)) != String($0) }
    }

    @Test("a fork named with hostile Unicode: every frame accepted, the end reached, no control stored")
    func hostileForkRun() async throws {
        let bridge = try Bridge()
        var fork = ForkRunPayload(runID: 31, start: Date().timeIntervalSince1970 - 600)
        fork.workflow = "Deploy " + Self.hostile
        fork.branch = "b" + Self.hostile
        fork.fork = "mallory/rocket"
        let jobs = fork.jobs
        #expect(await bridge.github.deliver(event: "workflow_run", body: try fork.body("requested")) == 202)
        await bridge.deliver([
            jobs.job(3_101, "build " + Self.hostile, "queued", createdAt: 2),
            jobs.job(3_101, "build " + Self.hostile, "in_progress", createdAt: 2, startedAt: 3),
            jobs.job(
                3_101, "build " + Self.hostile, "completed", createdAt: 2, startedAt: 3, completedAt: 20,
                conclusion: "failure"),
        ])
        #expect(
            await bridge.github.deliver(
                event: "workflow_run", body: try fork.body("completed", at: 21, conclusion: "failure")) == 202)
        // A new activity starts `ended` too: the end is the end frame's progress, then the state.
        #expect(
            await ActionEndToEndTests.eventually {
                bridge.card?.state == "ended" && bridge.card?.content["progress"] == 1
            })
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        let card = try #require(bridge.card)
        #expect(card.content["progress"] == 1)
        for text in Self.strings(in: .object(card.content)) + [card.name] {
            #expect(!Self.hasControl(text), "\(text.debugDescription)")
            #expect(text.unicodeScalars.count <= 256)
        }
        for label in card.content["step_labels"]?.arrayValue ?? [] {
            #expect((label.stringValue ?? "").unicodeScalars.count <= 32)
        }
        let refused = bridge.pushward.requests.filter { $0.status == 422 }
        #expect(refused.isEmpty, "\(refused.map(\.body))")
    }

    @Test("PushWard refuses the step labels once: the next frame goes without them, the run says so, the card ends")
    func refusedFieldDoesNotFreezeTheCard() async throws {
        let bridge = try Bridge()
        bridge.pushward.refuseOnce(field: "step_labels")
        let script = ActionEndToEndTests.script(41, ago: 300)
        await bridge.deliver(script.deliveries(waves: [[RunScript.Job("lint")], [RunScript.Job("test")]]))
        // A new activity starts `ended` too: the end is the end frame's progress, then the state.
        #expect(
            await ActionEndToEndTests.eventually {
                bridge.card?.state == "ended" && bridge.card?.content["progress"] == 1
            })
        let card = try #require(bridge.card)
        #expect(card.content["progress"] == 1)
        #expect(card.content["step_labels"] == nil)
        #expect(bridge.pushward.requests.filter { $0.status == 422 }.count == 1)
        let database = try BridgeDatabase(path: bridge.databasePath, readOnly: true)
        let stored = try #require(try database.storedRun(RunKey(repository: "acme/widgets", runID: 41, attempt: 1)))
        let session = try #require(try database.session(slug: stored.slug))
        #expect(session.stored.session.droppedFields?["step_labels"]?.hasPrefix("422") == true)
        // Said on the run: by explain next to the refusal, and by runs show.
        let sentences = RunExplanation.sentences(
            RunExplanation.Facts(
                run: stored, session: session.stored, acknowledged: session.acknowledged,
                requests: try database.requests(for: stored.state.key), deliveries: [], settings: ActivitySettings()))
        #expect(sentences.contains { $0.contains("went on without step_labels") }, "\(sentences)")
        let shown = try await BridgeProcess.run(
            ["runs", "show", "41", "--database", bridge.databasePath, "--no-color"], in: try ScratchDirectory())
        #expect(shown.stdout.contains("dropped after a refusal: step_labels (422"), "\(shown.stdout)")
        await bridge.daemon.shutdown()
    }
}
