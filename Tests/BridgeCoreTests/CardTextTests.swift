import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// Text measured as PushWard measures it (Unicode scalars, "runes"), cut only between grapheme
/// clusters, and cleaned of every control and bidi character, on every card a run draws.
@Suite("card text")
struct CardTextTests {
    /// Names whose scalars outnumber their characters, each in the shape a legitimate or hostile
    /// job name takes: regional-indicator flags (2 scalars each), a ZWJ family (7), skin tones (2),
    /// an `e` with three stacked accents (4), VS16 emoji (2), Devanagari and Thai clusters.
    static let pieces: [(name: String, text: String)] = [
        ("flags", "🇩🇪🇫🇷🇮🇹🇪🇸🇬🇧🇺🇸🇯🇵🇨🇳🇧🇷🇮🇳"),
        ("ZWJ family", "👨‍👩‍👧‍👦"),
        ("skin tones", "👍🏽👋🏿🤝🏻"),
        ("stacked marks", "e\u{301}\u{302}\u{303}"),
        ("VS16 emoji", "⚙️❤️☁️"),
        ("Devanagari", "क्षत्रिय परीक्षण"),
        ("Thai", "ทดสอบการทำงาน"),
    ]

    /// `text` repeated and prefixed with ASCII so its rune count sweeps across `limit`.
    static func around(_ limit: Int, _ text: String) -> [String] {
        var cases: [String] = []
        for pad in 0...12 {
            let base = String(repeating: "x", count: max(0, limit - 8 + pad))
            cases.append(base + text)
            cases.append(text + base)
        }
        cases.append(String(repeating: text, count: limit))
        return cases
    }

    /// The checks every clamp result must pass: within the limit in runes, unchanged when it
    /// fitted, else whole leading characters of the input and an ellipsis.
    static func expectFits(_ text: String, _ limit: Int, _ note: String) {
        let result = CardText.clamp(text, to: limit)
        #expect(result.unicodeScalars.count <= limit, "\(note): \(result.unicodeScalars.count) runes")
        if text.unicodeScalars.count <= limit {
            #expect(result == text, "\(note): a text that fits is not touched")
            return
        }
        #expect(result.hasSuffix(CardText.ellipsis), "\(note): a cut is marked")
        let kept = Array(result.dropLast())
        #expect(Array(text.prefix(kept.count)) == kept, "\(note): only whole characters are kept")
        #expect(result.unicodeScalars.dropLast().last != "\u{200D}", "\(note): no joiner before the ellipsis")
    }

    @Test("every hostile shape at and around the label, text and title limits: within runes, whole clusters")
    func clampAroundLimits() {
        for limit in [4, 24, 32, 64, 256] {
            for (name, text) in Self.pieces {
                for (index, value) in Self.around(limit, text).enumerated() {
                    Self.expectFits(value, limit, "\(name) #\(index) at \(limit)")
                }
            }
        }
    }

    @Test("a cut never splits a flag, a family, a mark from its base or an emoji from its VS16")
    func cutsBetweenClusters() {
        #expect(CardText.clamp("ab🇫🇷cd", to: 4) == "ab…")
        #expect(CardText.clamp("ab🇫🇷cd", to: 5) == "ab🇫🇷…")
        #expect(CardText.clamp("a👨‍👩‍👧‍👦", to: 7) == "a…", "the family is 7 runes: it does not fit in 6")
        #expect(CardText.clamp("a👨‍👩‍👧‍👦bc", to: 9) == "a👨‍👩‍👧‍👦…")
        #expect(CardText.clamp("ae\u{301}\u{302}\u{303}z", to: 5) == "a…", "the accents stay with their e")
        #expect(CardText.clamp("⚙️⚙️⚙️", to: 5) == "⚙️⚙️…")
        // A joiner ending a cluster (no emoji after it) never sits before the ellipsis.
        #expect(CardText.clamp("ab👨\u{200D}xyz", to: 5) == "ab👨…")
        #expect(CardText.clamp("anything", to: 0) == "")
    }

    @Test("the issue's job name: 37 runes in 28 characters becomes a 32-rune label")
    func theReportedName() {
        let name = "🇩🇪🇫🇷🇮🇹🇪🇸🇬🇧🇺🇸🇯🇵🇨🇳🇧🇷🇮🇳 deploy ⚙️ matrix (ubuntu, 3.12)"
        #expect(name.count <= 64 && name.unicodeScalars.count > 32)
        let label = CardText.fitted(name, to: 32)
        #expect(label.unicodeScalars.count <= 32)
        #expect(label.hasPrefix("🇩🇪🇫🇷🇮🇹🇪🇸🇬🇧🇺🇸🇯🇵🇨🇳🇧🇷🇮🇳 deploy"))
    }

    /// Every character the issue names, and the rest of the bidi and control families.
    static let controls: [Unicode.Scalar] =
        (0x202A...0x202E).map { Unicode.Scalar($0)! } + (0x2066...0x2069).map { Unicode.Scalar($0)! }
        + [
            "\u{0}", "\u{7}", "\u{8}", "\u{9}", "\u{A}", "\u{D}", "\u{1B}", "\u{7F}", "\u{85}", "\u{9B}", "\u{2028}",
            "\u{2029}", "\u{200E}", "\u{200F}", "\u{061C}",
        ]

    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { Self.controls.contains($0) }
    }

    @Test("plain drops bidi controls and turns C0, C1 and the separators into spaces")
    func plainText() {
        #expect(CardText.plain("main\u{202E}kcatta") == "mainkcatta")
        #expect(CardText.plain("a\u{2028}b\u{A}c\u{85}d\u{1B}[1A") == "a b c d [1A")
        #expect(CardText.plain("👨‍👩‍👧‍👦 क्ष") == "👨‍👩‍👧‍👦 क्ष", "joiners stay")
        for control in Self.controls {
            #expect(!Self.hasControl(CardText.fitted("x\(control)y", to: 32)), "U+\(String(control.value, radix: 16))")
        }
    }

    /// Every string member of a stored content, nested ones included.
    static func strings(in value: JSONValue) -> [String] {
        if let text = value.stringValue { return [text] }
        if let array = value.arrayValue { return array.flatMap(strings) }
        if let object = value.objectValue { return object.values.flatMap(strings) }
        return []
    }

    static func play(workflow: String, job: String, branch: String, fork: Bool, conclusion: String) -> BridgeHarness {
        var script = RunScript(workflow: workflow, branch: branch)
        if fork {
            script.headRepository = "mallory/rocket"
            script.event = "pull_request"
        }
        var harness = BridgeHarness()
        harness.play(
            script.deliveries(waves: [
                [RunScript.Job("build")], [RunScript.Job(job, conclusion: conclusion), RunScript.Job(job + " 2")],
            ]))
        return harness
    }

    @Test("hostile names as job, workflow and branch: accepted by the tests' PushWard, the card reaches its end")
    func hostileNamesReachTheEnd() throws {
        let longest = "🇩🇪🇫🇷🇮🇹🇪🇸🇬🇧🇺🇸🇯🇵🇨🇳🇧🇷🇮🇳 deploy ⚙️ matrix (ubuntu, 3.12)"
        for (kind, piece) in Self.pieces + [("reported", longest)] {
            for text in [piece, String(repeating: piece, count: 40)] {
                for conclusion in ["success", "failure"] {
                    let harness = Self.play(
                        workflow: text, job: text, branch: text, fork: true, conclusion: conclusion)
                    #expect(harness.violations.isEmpty, "\(kind): \(harness.violations)")
                    let stored = try #require(harness.stored(), "\(kind)")
                    #expect(stored.state == "ended", "\(kind) \(conclusion): the card ended")
                    #expect(stored.content["progress"] == 1, "\(kind) \(conclusion): the final frame was taken")
                    for label in stored.content["step_labels"]?.arrayValue ?? [] {
                        #expect((label.stringValue ?? "").unicodeScalars.count <= 32)
                    }
                    #expect(CardText.runes(stored.name) <= 256)
                }
            }
        }
    }

    @Test("every control in a fork's workflow, job and branch name: none in what the tests' PushWard stored")
    func noControlReachesTheCard() throws {
        for control in Self.controls {
            let name = "evil\(control)name"
            for template in [ActivitySettings.Template.steps, .generic] {
                var settings = ActivitySettings.pushingEveryChange
                settings.template = template
                var script = RunScript(workflow: "Deploy \(name)", branch: "b\(control)x")
                script.headRepository = "mallory/rocket\(control)"
                script.event = "pull_request"
                var harness = BridgeHarness(settings: settings)
                // Mid-run and at the end: the live frames carry the job's name in `state`.
                let events = script.deliveries(waves: [[RunScript.Job("job \(name)", conclusion: "failure")]])
                for event in events.dropLast() { harness.feed(event) }
                let live = try #require(harness.stored())
                harness.play([events.last!])
                let stored = try #require(harness.stored())
                let note = "U+\(String(control.value, radix: 16)) on \(template)"
                #expect(harness.violations.isEmpty, "\(note)")
                for text in Self.strings(in: .object(live.content)) + Self.strings(in: .object(stored.content))
                    + [stored.name]
                {
                    #expect(!Self.hasControl(text), "\(note): \(text.debugDescription)")
                }
                #expect(
                    Self.strings(in: .object(stored.content)).contains { $0.contains("evil") && $0.contains("name") })
            }
        }
    }
}
