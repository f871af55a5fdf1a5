import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// The store writes every JSON column with `StreamingJSONEncoder` and reads it back with
/// `JSONDecoder`: whatever the engine holds must come back equal, and mean what Foundation's
/// `JSONEncoder` would have written.
@Suite("Streaming JSON encoder")
struct StreamingJSONEncoderTests {
    static let script = RunScript()

    static func text<T: Encodable>(_ value: T) throws -> String {
        try StreamingJSONEncoder().encodeToString(value)
    }

    /// Decodes back to an equal value, and parses to the same document as `JSONEncoder`'s output.
    static func expectRoundTrip<T: Codable & Equatable>(
        _ value: T, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let bytes = try StreamingJSONEncoder().encode(value)
        let decoded = try JSONDecoder().decode(T.self, from: Data(bytes))
        #expect(decoded == value, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
        let streamed = try JSONValue(parsing: Data(bytes))
        let foundation = try JSONValue(parsing: JSONEncoder().encode(value))
        #expect(streamed == foundation, sourceLocation: sourceLocation)
    }

    /// Everything the store writes for an engine: each run, card session, progress floor, the gate.
    static func expectEngineRoundTrips(
        _ engine: BridgeEngine, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for state in engine.runs.values {
            try expectRoundTrip(state, sourceLocation: sourceLocation)
            // The store's hand-written run state writer: the same bytes as the encoder.
            let encoded = try text(state)
            #expect(
                RunStateJSON.text(of: state) == encoded, "\(RunStateJSON.text(of: state) ?? "nil")\n\(encoded)",
                sourceLocation: sourceLocation)
        }
        for session in engine.sessions.values { try expectRoundTrip(session, sourceLocation: sourceLocation) }
        for floor in engine.progressFloors.values { try expectRoundTrip(floor, sourceLocation: sourceLocation) }
        try expectRoundTrip(engine.gate, sourceLocation: sourceLocation)
    }

    static func fixtureEvent(_ name: String) throws -> WebhookEvent {
        try WebhookDecoder.decode(
            event: String(name.prefix { $0 != "." }), body: Fixtures.data(name), contentType: "application/json")
    }

    // MARK: What the bridge stores

    @Test("the recorded re-run (attempt 10): every state along the way comes back equal")
    func recordedRerun() throws {
        let names = [
            "workflow_job.queued.attempt10-pre-commit.json", "workflow_job.completed.attempt10-pre-commit.json",
            "workflow_job.queued.attempt10-test.json", "workflow_job.completed.attempt10-test.json",
            "workflow_run.completed.attempt10.json",
        ]
        var harness = BridgeHarness()
        for name in names {
            harness.feed(try Self.fixtureEvent(name))
            try Self.expectEngineRoundTrips(harness.engine)
        }
        harness.finish()
        try Self.expectEngineRoundTrips(harness.engine)
        let state = try #require(harness.engine.runs.values.first)
        #expect(state.jobs.count == 2)
        #expect(state.completion != nil)
        #expect(state.run != nil)
        #expect(harness.engine.sessions.values.contains { $0.acknowledged != nil })
    }

    @Test("every recorded workflow delivery, through one engine, comes back equal")
    func everyRecordedDelivery() throws {
        let names = try Fixtures.names().filter {
            ($0.hasPrefix("workflow_job.") || $0.hasPrefix("workflow_run.")) && !$0.hasSuffix(".capture.json")
        }
        #expect(names.count > 20)
        // Straight into the engine, arriving a second apart: the recordings span years, and a
        // render session's clock would run every timer in between.
        var engine = BridgeEngine()
        for (index, name) in names.enumerated() {
            _ = engine.receive(try Self.fixtureEvent(name), at: 1_700_000_000 + Double(index))
            try Self.expectEngineRoundTrips(engine)
        }
        #expect(engine.runs.count > 3)
        #expect(engine.runs.values.contains { $0.jobMetadata != nil })
        #expect(engine.runs.values.contains { $0.run?.pullRequests.isEmpty == false })
    }

    @Test("seeded, re-run and matrix runs: history seeds, estimates and inherited steps come back equal")
    func scriptedRuns() throws {
        let waves: [[RunScript.Job]] = [
            [RunScript.Job("lint", duration: 20)],
            (1...6).map {
                RunScript.Job(
                    "test (shard-\($0))", duration: Double(10 + $0), conclusion: $0 == 4 ? "failure" : "success")
            },
            [RunScript.Job("report \"final\" / ünïcode 🚀", duration: 5, conclusion: "skipped")],
        ]
        var harness = BridgeHarness()
        harness.play(Self.script.deliveries(waves: waves))
        try Self.expectEngineRoundTrips(harness.engine)

        // A re-run of the failed jobs inherits the first attempt's steps.
        let rerun = RunScript(attempt: 2, start: Self.script.start + 600, firstJobID: 80_000)
        harness.feed(rerun.run("requested", at: 0))
        harness.feed(rerun.job(80_000, "test (shard-4)", "in_progress", createdAt: 1, startedAt: 2))
        try Self.expectEngineRoundTrips(harness.engine)

        // A later run of the same workflow is seeded from history.
        let second = RunScript(runID: 9_001, runNumber: 43, start: Self.script.start + 3_600, firstJobID: 60_000)
        for event in second.deliveries(waves: waves) {
            harness.feed(event)
            try Self.expectEngineRoundTrips(harness.engine)
        }
        harness.finish()
        try Self.expectEngineRoundTrips(harness.engine)

        let states = Array(harness.engine.runs.values)
        #expect(states.contains { !$0.inherited.isEmpty })
        #expect(states.contains { $0.seed != nil && !$0.estimates.isEmpty })
        #expect(states.contains { $0.completion != nil && $0.jobs.count > 5 })
        #expect(harness.engine.sessions.values.contains { $0.acknowledged?.content.isEmpty == false })
        #expect(!harness.engine.progressFloors.isEmpty)
        #expect(harness.violations.isEmpty)
    }

    @Test("the run state writer declines a state holding a non-finite number, which the encoder reports")
    func runStateWriterNonFinite() throws {
        var harness = BridgeHarness()
        harness.feed(Self.script.job(1, "build", "in_progress", createdAt: 0, startedAt: 1))
        var state = try #require(harness.engine.runs.values.first)
        #expect(RunStateJSON.text(of: state) != nil)
        state.estimates["build"] = .infinity
        #expect(RunStateJSON.text(of: state) == nil)
        #expect(throws: EncodingError.self) { try Self.text(state) }
    }

    @Test("a session with a refused body, a problem and every optional set comes back equal")
    func activitySession() throws {
        var session = ActivitySession(identity: ActivityIdentity(slug: "gh-1234abcd", name: "GitHub: acme/widgets"))
        try Self.expectRoundTrip(session)
        session.assign(to: RunKey(repository: "acme/widgets", runID: 9_000, attempt: 3))
        session.phase = .live
        session.acknowledged = StoredActivity(
            state: "ongoing",
            content: [
                "progress": 0.375, "total_steps": 3, "step_labels": ["lint", "test \"unit\"", "déploy 🚀"],
                "state": "Running\ttests\n", "nested": ["a": [1, 2.5, nil, true], "b": [:]],
            ], name: "GitHub: acme/widgets", priority: 5)
        session.lastPatchAt = 1_700_000_123.456
        session.finalShownAt = 1_700_000_200
        session.retryAt = 1_700_000_300.25
        session.failures = 2
        session.rejectedBody = ["content": ["progress": 1.5, "odd key \u{1}": "\u{0}"], "state": nil]
        session.needsFullFrame = true
        session.lastProblem = "422 \"validation\" \\ content.progress: must be ≤ 1\n"
        session.lastProblemAt = 1_700_000_124
        try Self.expectRoundTrip(session)
    }

    @Test("the dispatch gate, idle and blocking everything, comes back equal")
    func dispatchGate() throws {
        var gate = DispatchGate()
        try Self.expectRoundTrip(gate)
        gate.quotaPausedUntil = 1_700_086_400
        gate.rateLimitedUntil = 1_700_000_120.5
        gate.authBlockedUntil = 1_700_003_600
        gate.authFailures = 3
        gate.reason = "quota.exceeded: \"monthly\" limit"
        for _ in 0..<CircuitBreaker.threshold { gate.breaker.recordFailure(at: 1_700_000_000) }
        #expect(gate.breaker.state == .open)
        try Self.expectRoundTrip(gate)
        try Self.expectRoundTrip(
            ProgressFloor(run: RunKey(repository: "a/b", runID: 1, attempt: 2), step: 3, progress: 0.1))
    }

    // MARK: Edge types

    enum Kind: String, Codable, Equatable { case plain, quoted = "quo\"ted" }
    enum Level: Int, Codable, Equatable { case low = -1, high = 1_000 }

    struct Edge: Codable, Equatable {
        var text: String
        var present: String?
        var absent: Int?
        var explicitNull: [Int?]
        var byInt: [Int: String]
        var byString: [String: [Double]]
        var nested: [[String: [Int]]]
        var data: Data
        var emptyData: Data
        var url: URL
        var date: Date
        var kind: Kind
        var level: Level
        var int: Int
        var int8: Int8
        var int16: Int16
        var int32: Int32
        var int64: Int64
        var uint: UInt
        var uint8: UInt8
        var uint16: UInt16
        var uint32: UInt32
        var uint64: UInt64
        var float: Float
        var doubles: [Double]
        var flags: [Bool]
        var empty: [String]
        var emptyObject: [String: Int]
    }

    static let awkwardText =
        "quote \" backslash \\ slash / newline \n cr \r tab \t nul \u{0} bell \u{7} unit \u{1F} del \u{7F} "
        + "é 中文 🚀 👨‍👩‍👧 \u{2028} end"

    static let edge = Edge(
        text: awkwardText, present: "", absent: nil, explicitNull: [nil, 1, nil],
        byInt: [10: "ten", 2: "two", -3: "minus three", Int.max: "max"],
        byString: ["b": [1.5], "a": [], "": [0], "ключ": [-2], "a\"b": [3]],
        nested: [["x": [1, 2]], [:], ["y": []]], data: Data((0...255).map(UInt8.init)), emptyData: Data(),
        url: URL(string: "https://example.com/a/b?q=1&r=%20#frag")!, date: Date(timeIntervalSince1970: 1_700_000_000.5),
        kind: .quoted, level: .low, int: Int.min, int8: .min, int16: .max, int32: .min, int64: .max, uint: .max,
        uint8: .max, uint16: 0, uint32: .max, uint64: .max, float: 0.1,
        doubles: [
            0.1, 1e-300, 1.7976931348623157e308, -0.0, 0, .leastNonzeroMagnitude, 3, -2.5, 123_456_789.125,
            9_007_199_254_740_992,
            9_007_199_254_740_994, 1e16, -1e22, 0.30000000000000004, 1_700_000_000.123, 2.2250738585072014e-308,
        ],
        flags: [true, false], empty: [], emptyObject: [:])

    @Test("optionals, integer widths, Int- and String-keyed dictionaries, Data, URL, Date, enums")
    func edgeTypes() throws {
        try Self.expectRoundTrip(Self.edge)
        try Self.expectRoundTrip([Self.edge, Self.edge])
        try Self.expectRoundTrip(["k": Self.edge])
        try Self.expectRoundTrip(Optional(Self.edge))
    }

    @Test("members in declaration order, nil skipped, dictionaries sorted by key, no whitespace")
    func exactText() throws {
        struct Ordered: Encodable {
            var zeta = 1
            var alpha: String? = nil
            var mid: Bool? = true
            var byInt: [Int: Int] = [10: 1, 2: 2, -1: 3]
            var byString: [String: Int] = ["b": 1, "a": 2, "B": 3]
            var value: JSONValue = ["z": 1, "a": [nil, 2.5, "x"]]
        }
        #expect(
            try Self.text(Ordered())
                == #"{"zeta":1,"mid":true,"byInt":{"-1":3,"2":2,"10":1},"byString":{"B":3,"a":2,"b":1},"#
                + #""value":{"a":[null,2.5,"x"],"z":1}}"#)
        #expect(try Self.text([1, 2, 3]) == "[1,2,3]")
        #expect(try Self.text("top") == #""top""#)
        #expect(try Self.text(Optional<Int>.none) == "null")
        #expect(try Self.text(Data("hi!".utf8)) == #""aGkh""#)
        #expect(try Self.text(URL(string: "https://x.example/p?q=1")!) == #""https://x.example/p?q=1""#)
        #expect(try Self.text(Level.high) == "1000")
    }

    @Test("strings: quote, backslash and controls escaped, everything else passed through as UTF-8")
    func stringEscaping() throws {
        #expect(
            try Self.text(Self.awkwardText)
                == #""quote \" backslash \\ slash / newline \n cr \r tab \t nul \u0000 bell \u0007 unit \u001f "#
                + "del \u{7F} é 中文 🚀 👨‍👩‍👧 \u{2028} end\"")
        for scalar in (0..<0x80).compactMap(Unicode.Scalar.init) {
            let text = "a\(scalar)b"
            #expect(try JSONDecoder().decode(String.self, from: Data(Self.text(text).utf8)) == text)
        }
    }

    @Test("doubles print short and decode to the same bits; integral ones without a fraction")
    func doubles() throws {
        #expect(
            try Self.text([3.0, -0.0, 0.1, 1e-300, 1.7976931348623157e308, 1e16, 0.5])
                == "[3,-0,0.1,1e-300,1.7976931348623157e+308,1e+16,0.5]")
        var generator = SplitMix64(seed: 42)
        var values = Self.edge.doubles + [.leastNonzeroMagnitude, -.greatestFiniteMagnitude, .ulpOfOne]
        while values.count < 2_000 {
            let value = Double(bitPattern: generator.next())
            if value.isFinite { values.append(value) }
        }
        values += (0..<500).map { _ in Double(Int64.random(in: -(1 << 60)...(1 << 60), using: &generator)) }
        let decoded = try JSONDecoder().decode([Double].self, from: Data(StreamingJSONEncoder().encode(values)))
        #expect(decoded.map(\.bitPattern) == values.map(\.bitPattern))
        let floats: [Float] = [0.1, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -3, 1e-20]
        let decodedFloats = try JSONDecoder().decode([Float].self, from: Data(StreamingJSONEncoder().encode(floats)))
        #expect(decodedFloats.map(\.bitPattern) == floats.map(\.bitPattern))
    }

    @Test("a non-finite number throws invalidValue with where it was, as JSONEncoder does")
    func nonFinite() throws {
        struct Holder: Encodable {
            var name = "x"
            var values: [String: [Double]]
        }
        for bad in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(bad) }
            #expect(throws: EncodingError.self) {
                try StreamingJSONEncoder().encode(JSONValue.array([1, .number(bad)]))
            }
            do {
                _ = try StreamingJSONEncoder().encode(Holder(values: ["k": [1, bad]]))
                Issue.record("\(bad) was encoded")
            } catch EncodingError.invalidValue(_, let context) {
                #expect(context.codingPath.map(\.stringValue) == ["values", "k", "Index 1"])
            }
        }
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode([Float.nan]) }
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(["a": Float.infinity]) }
    }

    // MARK: Containers written by hand

    /// Nested containers requested and left while the parent goes on, as hand-written
    /// conformances do.
    struct Shape: Codable, Equatable {
        var name: String
        var origin: [Int]
        var corners: [[String: Int]]
        var tail: Bool

        enum Keys: String, CodingKey { case name, point, list, tail }
        enum PointKeys: String, CodingKey { case x, y }

        init(name: String, origin: [Int], corners: [[String: Int]], tail: Bool) {
            self.name = name
            self.origin = origin
            self.corners = corners
            self.tail = tail
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(name, forKey: .name)
            var point = container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
            try point.encode(origin[0], forKey: .x)
            try point.encode(origin[1], forKey: .y)
            // The parent goes on with `point` still open.
            var list = container.nestedUnkeyedContainer(forKey: .list)
            for corner in corners {
                var row = list.nestedContainer(keyedBy: PointKeys.self)
                try row.encode(corner["x"] ?? 0, forKey: .x)
                var inner = list.nestedUnkeyedContainer()
                try inner.encode(corner["y"] ?? 0)
                try inner.encodeNil()
            }
            try list.encode("end")
            try container.encode(tail, forKey: .tail)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            name = try container.decode(String.self, forKey: .name)
            let point = try container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
            origin = [try point.decode(Int.self, forKey: .x), try point.decode(Int.self, forKey: .y)]
            var list = try container.nestedUnkeyedContainer(forKey: .list)
            var corners: [[String: Int]] = []
            while list.count.map({ list.currentIndex < $0 - 1 }) ?? false {
                let row = try list.nestedContainer(keyedBy: PointKeys.self)
                var inner = try list.nestedUnkeyedContainer()
                corners.append(["x": try row.decode(Int.self, forKey: .x), "y": try inner.decode(Int.self)])
                _ = try inner.decodeNil()
            }
            #expect(try list.decode(String.self) == "end")
            self.corners = corners
            tail = try container.decode(Bool.self, forKey: .tail)
        }
    }

    @Test("nested keyed and unkeyed containers close where they should, also when the parent goes on")
    func nestedContainers() throws {
        let shape = Shape(name: "sq", origin: [1, -2], corners: [["x": 1, "y": 2], ["x": 3, "y": 4]], tail: true)
        #expect(
            try Self.text(shape)
                == #"{"name":"sq","point":{"x":1,"y":-2},"list":[{"x":1},[2,null],{"x":3},[4,null],"end"],"tail":true}"#
        )
        try Self.expectRoundTrip(shape)
        try Self.expectRoundTrip([shape, Shape(name: "", origin: [0, 0], corners: [], tail: false)])
    }

    class Base: Codable, Equatable {
        var id: Int
        init(id: Int) { self.id = id }
        static func == (lhs: Base, rhs: Base) -> Bool { lhs.isEqual(to: rhs) }
        func isEqual(to other: Base) -> Bool { id == other.id && type(of: self) == type(of: other) }
    }

    /// Writes its superclass through `superEncoder()`: the JSONDecoder side reads `super`.
    final class ViaSuperEncoder: Base {
        var label: String
        enum Keys: String, CodingKey { case label }

        init(id: Int, label: String) {
            self.label = label
            super.init(id: id)
        }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            label = try container.decode(String.self, forKey: .label)
            try super.init(from: container.superDecoder())
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try super.encode(to: container.superEncoder())
            try container.encode(label, forKey: .label)
        }

        override func isEqual(to other: Base) -> Bool {
            super.isEqual(to: other) && label == (other as? ViaSuperEncoder)?.label
        }
    }

    /// Shares its encoder with its superclass: two keyed container requests fill one object.
    final class SharedEncoder: Base {
        var label: String
        enum Keys: String, CodingKey { case label }

        init(id: Int, label: String) {
            self.label = label
            super.init(id: id)
        }

        required init(from decoder: any Decoder) throws {
            label = try decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .label)
            try super.init(from: decoder)
        }

        override func encode(to encoder: any Encoder) throws {
            try super.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(label, forKey: .label)
        }

        override func isEqual(to other: Base) -> Bool {
            super.isEqual(to: other) && label == (other as? SharedEncoder)?.label
        }
    }

    @Test("superEncoder writes the superclass under \"super\"; a shared encoder fills one object")
    func subclasses() throws {
        let viaSuper = ViaSuperEncoder(id: 7, label: "l")
        #expect(try Self.text(viaSuper) == #"{"super":{"id":7},"label":"l"}"#)
        #expect(try JSONDecoder().decode(ViaSuperEncoder.self, from: Data(Self.text(viaSuper).utf8)) == viaSuper)
        let shared = SharedEncoder(id: 8, label: "m")
        #expect(try Self.text(shared) == #"{"id":8,"label":"m"}"#)
        #expect(try JSONDecoder().decode(SharedEncoder.self, from: Data(Self.text(shared).utf8)) == shared)
        try Self.expectRoundTrip([viaSuper])
    }

    struct Custom: Encodable {
        var body: @Sendable (any Encoder) throws -> Void
        func encode(to encoder: any Encoder) throws { try body(encoder) }
    }

    @Test("an unused superEncoder still holds its place; a value that encodes nothing is {}")
    func emptyValues() throws {
        #expect(
            try Self.text(
                Custom { encoder in
                    var container = encoder.container(keyedBy: StreamingJSONKey.self)
                    _ = container.superEncoder()
                    try container.encode(1, forKey: StreamingJSONKey(stringValue: "after"))
                }) == #"{"super":{},"after":1}"#)
        #expect(try Self.text(["a": Custom { _ in }]) == #"{"a":{}}"#)
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(Custom { _ in }) }
    }

    @Test("misuse that a stream cannot honour throws instead of writing bad JSON")
    func misuse() throws {
        // Writing to a nested container after its parent went on, even once a sibling opened at the same depth.
        let stale = Custom { encoder in
            var container = encoder.container(keyedBy: StreamingJSONKey.self)
            var first = container.nestedContainer(
                keyedBy: StreamingJSONKey.self, forKey: StreamingJSONKey(stringValue: "a"))
            _ = container.nestedContainer(keyedBy: StreamingJSONKey.self, forKey: StreamingJSONKey(stringValue: "b"))
            try first.encode(1, forKey: StreamingJSONKey(stringValue: "late"))
        }
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(stale) }
        let twice = Custom { encoder in
            var single = encoder.singleValueContainer()
            try single.encode(1)
            try single.encode(2)
        }
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(twice) }
        let mixed = Custom { encoder in
            var keyed = encoder.container(keyedBy: StreamingJSONKey.self)
            try keyed.encode(1, forKey: StreamingJSONKey(stringValue: "a"))
            var unkeyed = encoder.unkeyedContainer()
            try unkeyed.encode(2)
        }
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode(mixed) }
    }

    @Test("codingPath tells a value where it is")
    func codingPath() throws {
        let probe = Custom { encoder in
            var container = encoder.singleValueContainer()
            try container.encode(encoder.codingPath.map(\.stringValue).joined(separator: "/"))
        }
        struct Outer: Encodable {
            var list: [[String: Custom]]
        }
        #expect(try Self.text(Outer(list: [["k": probe]])) == #"{"list":[{"k":"list/Index 0/k"}]}"#)
    }

    // MARK: canonicalString

    /// `canonicalString` as it was written before it moved to a byte buffer: the bytes must not change.
    static func legacyCanonical(_ value: JSONValue) -> String {
        func writeString(_ text: String, to output: inout String) {
            output += "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": output += "\\\""
                case "\\": output += "\\\\"
                case "\n": output += "\\n"
                case "\r": output += "\\r"
                case "\t": output += "\\t"
                case let control where control.value < 0x20: output += String(format: "\\u%04x", control.value)
                default: output.unicodeScalars.append(scalar)
                }
            }
            output += "\""
        }
        func write(_ value: JSONValue, to output: inout String) {
            switch value {
            case .null: output += "null"
            case .bool(let flag): output += flag ? "true" : "false"
            case .number(let number):
                if let integer = value.intValue {
                    output += String(integer)
                } else if number.isFinite {
                    output += "\(number)"
                } else {
                    output += "null"
                }
            case .string(let text): writeString(text, to: &output)
            case .array(let elements):
                output += "["
                for (index, element) in elements.enumerated() {
                    if index > 0 { output += "," }
                    write(element, to: &output)
                }
                output += "]"
            case .object(let members):
                output += "{"
                for (index, key) in members.keys.sorted().enumerated() {
                    if index > 0 { output += "," }
                    writeString(key, to: &output)
                    output += ":"
                    write(members[key]!, to: &output)
                }
                output += "}"
            }
        }
        var output = ""
        write(value, to: &output)
        return output
    }

    @Test("canonicalString writes the same bytes as before, for every ASCII scalar and awkward numbers")
    func canonicalBytesUnchanged() throws {
        let controls = String(String.UnicodeScalarView((0..<0x80).compactMap(Unicode.Scalar.init)))
        let value: JSONValue = [
            "text": .string(Self.awkwardText), "controls": .string(controls), "": "empty key",
            "Zebra": 1, "apple": [1, -1, 0, 2.5, -0.0, 1e-300, 9.5e15, 9e15, 1e300, .number(.nan), .number(.infinity)],
            "nested": ["b": [nil, true, false, [:], []], "a": ["x\u{1}": "y\u{1F}z"]], "ключ": "значение 🚀",
        ]
        #expect(value.canonicalString == Self.legacyCanonical(value))
        #expect(value.canonicalData == Data(Self.legacyCanonical(value).utf8))
        #expect(JSONValue.string("a\u{1}b").canonicalString == #""a\u0001b""#)
        var harness = BridgeHarness()
        harness.play(Self.script.deliveries(waves: [[RunScript.Job("build")], [RunScript.Job("test ✓")]]))
        #expect(!harness.sent.isEmpty)
        for output in harness.sent {
            #expect(output.json.canonicalString == Self.legacyCanonical(output.json))
        }
    }
}
