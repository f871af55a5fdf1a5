import BridgeCore
import Foundation

extension FuzzCheck {
    /// Deeper than this, a built value is cut short with a scalar: it is the nesting limit of the
    /// JSON parser, so every built value is one that could have arrived as JSON.
    static let maximumMergePatchDepth = 512

    /// `MergePatch` on two arbitrary JSON values `a` and `b`, checking RFC 7396 and what
    /// `MergePatch.diff` documents, because the bridge's whole view of the server rests on them:
    /// - `diff(a, b)` is nil exactly when `a == b`;
    /// - `apply(diff(a, b)!, to: a) == b` when `b` has no `null` member inside an object;
    /// - applying a patch is idempotent: `apply(b, apply(b, a)) == apply(b, a)`;
    /// - both values survive `canonicalData` and parsing back unchanged (the store keeps them so),
    ///   checked up to `maximumRoundTripDepth` levels.
    ///
    /// Input: the bytes describe `a` then `b` (see `jsonValue(from:depth:)`); numbers are finite,
    /// as they are in anything parsed from JSON.
    public static func mergePatch(_ input: [UInt8]) throws(FuzzFinding) {
        var reader = FuzzBytes(input)
        let a = jsonValue(from: &reader)
        let b = jsonValue(from: &reader)

        let patch = MergePatch.diff(from: a, to: b)
        try require((patch == nil) == (a == b), "diff is \(String(describing: patch)) for a \(a) and b \(b)")
        if let patch, !hasNullMember(b) {
            let result = MergePatch.apply(patch, to: a)
            try require(result == b, "apply(diff(a, b), a) is \(result), not b \(b), for a \(a)")
        }

        let once = MergePatch.apply(b, to: a)
        let twice = MergePatch.apply(b, to: once)
        try require(once == twice, "patch \(b) on \(a) gives \(once) once and \(twice) twice")

        // Only shallow values: `JSONValue(parsing:)` (Foundation's `JSONDecoder`) takes time cubic
        // in the nesting depth, seconds at 512 levels, which would drown this target in timeouts.
        for value in [a, b] where depth(of: value) <= maximumRoundTripDepth {
            let data = value.canonicalData
            let parsed: JSONValue
            do {
                parsed = try JSONValue(parsing: data)
            } catch {
                throw FuzzFinding("canonical JSON \(String(decoding: data, as: UTF8.self)) does not parse: \(error)")
            }
            try require(parsed == value, "\(value) reads back from canonical JSON as \(parsed)")
        }
    }

    /// Builds a value from the reader. A tag byte picks the kind (low 3 bits) and a detail;
    /// keys come mostly from a small pool, so `a` and `b` share members and diffs recurse.
    static func jsonValue(from reader: inout FuzzBytes, depth: Int = 0) -> JSONValue {
        let tag = reader.byte()
        let kind = depth >= maximumMergePatchDepth ? tag % 5 : tag % 8
        switch kind {
        case 0: return .null
        case 1: return .bool(tag & 0x80 != 0)
        case 2: return .number(Double(Int8(bitPattern: reader.byte())))
        case 3:
            let number = reader.double()
            return .number(number.isFinite ? number : Double(tag >> 3))
        case 4: return .string(fuzzString(from: &reader, tag: tag))
        case 5:
            let count = Int(reader.byte() % 6)
            return .array((0..<count).map { _ in jsonValue(from: &reader, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int(reader.byte() % 6) {
                let keyTag = reader.byte()
                let key =
                    keyTag < 0xF0
                    ? mergePatchKeys[Int(keyTag) % mergePatchKeys.count] : fuzzString(from: &reader, tag: keyTag)
                members[key] = jsonValue(from: &reader, depth: depth + 1)
            }
            return .object(members)
        }
    }

    private static let mergePatchKeys = ["a", "b", "c", "content", "state", ""]

    /// A short string: from a pool of awkward ones, or up to 31 raw bytes read as UTF-8 (invalid
    /// sequences become U+FFFD, as in any Swift string).
    private static func fuzzString(from reader: inout FuzzBytes, tag: UInt8) -> String {
        let pool = ["", "a", "null", "\u{0}", "e\u{301}", "\u{e9}", "\"\\/\u{8}\u{c}\n\r\t", "\u{1F600}", "\u{2028}"]
        if tag & 0x80 == 0 { return pool[Int(reader.byte()) % pool.count] }
        return String(decoding: reader.bytes(Int(reader.byte() % 32)), as: UTF8.self)
    }

    /// The deepest a value may be for the canonical JSON round trip (see `mergePatch`).
    static let maximumRoundTripDepth = 32

    private static func depth(of value: JSONValue) -> Int {
        switch value {
        case .object(let members): 1 + (members.values.map(depth).max() ?? 0)
        case .array(let elements): 1 + (elements.map(depth).max() ?? 0)
        default: 0
        }
    }

    /// Whether an object anywhere in `value` has a `null` member, which no merge patch can create.
    private static func hasNullMember(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let members): members.values.contains { $0.isNull || hasNullMember($0) }
        case .array(let elements): elements.contains(where: hasNullMember)
        default: false
        }
    }
}
