import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

@Suite struct MergePatchTests {
    // MARK: - apply: RFC 7396 Appendix A

    @Test(arguments: [
        (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
        (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
        (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
        (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
        (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
        (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
        (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
        (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
        (#"{"a":"foo"}"#, #"null"#, #"null"#),
        (#"{"a":"foo"}"#, #""bar""#, #""bar""#),
        (#"{"e":null}"#, #"{"a":1}"#, #"{"a":1,"e":null}"#),
        (#"["a","b"]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
        (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
    ])
    func rfcAppendixA(target: String, patch: String, expected: String) throws {
        let result = MergePatch.apply(try parse(patch), to: try parse(target))
        #expect(result == (try parse(expected)))
        #expect(result.canonicalString == expected)
    }

    // MARK: - diff: examples

    @Test func diffOfEqualValuesIsNil() {
        #expect(MergePatch.diff(from: ["a": 1, "b": [1, 2]], to: ["b": [1, 2], "a": 1]) == nil)
        #expect(MergePatch.diff(from: .null, to: .null) == nil)
        #expect(MergePatch.diff(from: "x", to: "x") == nil)
    }

    @Test func diffOfObjectsIsMinimalAndNullsRemovedMembers() {
        let old: JSONValue = ["keep": 1, "change": "a", "drop": true, "nested": ["x": 1, "y": 2]]
        let new: JSONValue = ["keep": 1, "change": "b", "add": [1], "nested": ["x": 1, "y": 3]]
        let patch = MergePatch.diff(from: old, to: new)
        #expect(patch == ["change": "b", "drop": nil, "add": [1], "nested": ["y": 3]])
    }

    @Test func diffReplacesArraysScalarsAndTypeChangesWhole() {
        #expect(MergePatch.diff(from: ["a": [1, 2, 3]], to: ["a": [1, 2]]) == ["a": [1, 2]])
        #expect(MergePatch.diff(from: ["a": "1"], to: ["a": 1]) == ["a": 1])
        #expect(MergePatch.diff(from: ["a": ["b": 1]], to: ["a": "flat"]) == ["a": "flat"])
        #expect(MergePatch.diff(from: [1], to: ["a": 1]) == ["a": 1])
        #expect(MergePatch.diff(from: ["a": 1], to: .null) == .null)
        #expect(MergePatch.diff(from: 1, to: 2) == 2)
    }

    @Test func diffToEmptyObjectNullsEveryMember() {
        #expect(MergePatch.diff(from: ["a": 1, "b": ["c": 2]], to: [:]) == ["a": nil, "b": nil])
        #expect(MergePatch.diff(from: ["a": ["c": 2]], to: ["a": [:]]) == ["a": ["c": nil]])
    }

    // MARK: - Properties over random values

    @Test func roundTripHoldsForRandomValues() {
        var random = SplitMix64(seed: 0x5EED_7396)
        for iteration in 0..<3000 {
            let old = randomValue(depth: 3, nullMembers: true, using: &random)
            // Half the pairs are edits of `old` (so the objects overlap), half unrelated values.
            let new =
                random.next() % 2 == 0
                ? mutate(old, depth: 3, using: &random)
                : randomValue(depth: 3, nullMembers: false, using: &random)

            #expect(MergePatch.diff(from: old, to: old) == nil, "iteration \(iteration)")
            #expect(MergePatch.diff(from: new, to: new) == nil, "iteration \(iteration)")
            guard old != new else { continue }
            guard let patch = MergePatch.diff(from: old, to: new) else {
                Issue.record("no patch for different values at iteration \(iteration): \(old) → \(new)")
                continue
            }
            #expect(
                MergePatch.apply(patch, to: old) == new,
                "iteration \(iteration): \(old.canonicalString) + \(patch.canonicalString)"
            )
            if case .object(let oldMembers) = old, case .object(let newMembers) = new,
                case .object(let patchMembers) = patch
            {
                // Minimal: the patch names only members that differ.
                for key in patchMembers.keys {
                    #expect(oldMembers[key] != newMembers[key], "iteration \(iteration): \(key) unchanged")
                }
            }
        }
    }

    @Test func randomGeneratorIsDeterministicAndVaried() {
        var first = SplitMix64(seed: 42)
        var second = SplitMix64(seed: 42)
        let a = (0..<20).map { _ in randomValue(depth: 3, nullMembers: true, using: &first) }
        let b = (0..<20).map { _ in randomValue(depth: 3, nullMembers: true, using: &second) }
        #expect(a == b)
        #expect(Set(a).count > 5)
        #expect(a.contains { $0.objectValue != nil })
    }

    // MARK: - Helpers

    private func parse(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: Data(text.utf8))
    }

    private func randomValue(depth: Int, nullMembers: Bool, using random: inout SplitMix64) -> JSONValue {
        let pick = random.next() % (depth > 0 ? 8 : 5)
        switch pick {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2: return .number([0, 1, -3, 2.5, 1e9][Int(random.next() % 5)])
        case 3: return .string(["", "a", "b", "ü 🚀"][Int(random.next() % 4)])
        case 4: return .number(Double(random.next() % 100))
        case 5:
            let count = Int(random.next() % 4)
            // Arrays are replaced whole, so `null` elements are fine even in a `new` value.
            return .array((0..<count).map { _ in randomValue(depth: depth - 1, nullMembers: true, using: &random) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int(random.next() % 5) {
                let key = Self.keys[Int(random.next() % UInt64(Self.keys.count))]
                var value = randomValue(depth: depth - 1, nullMembers: nullMembers, using: &random)
                if !nullMembers, value.isNull { value = "was null" }
                members[key] = value
            }
            return .object(members)
        }
    }

    /// An edit of `value` with no `null` object members: members changed, added, removed or
    /// recursed into.
    private func mutate(_ value: JSONValue, depth: Int, using random: inout SplitMix64) -> JSONValue {
        guard case .object(var members) = value, depth > 0 else {
            return randomValue(depth: depth, nullMembers: false, using: &random)
        }
        for key in members.keys.sorted() {
            switch random.next() % 4 {
            case 0: members.removeValue(forKey: key)
            case 1: members[key] = mutate(members[key] ?? .null, depth: depth - 1, using: &random)
            default: break
            }
        }
        if random.next() % 2 == 0 {
            let key = Self.keys[Int(random.next() % UInt64(Self.keys.count))]
            members[key] = randomValue(depth: depth - 1, nullMembers: false, using: &random)
        }
        // Nulls left over from `value` must go: `new` may not hold null members.
        return .object(members.mapValues { stripNullMembers($0) }.filter { !$0.value.isNull })
    }

    private func stripNullMembers(_ value: JSONValue) -> JSONValue {
        guard case .object(let members) = value else { return value }
        return .object(members.filter { !$0.value.isNull }.mapValues { stripNullMembers($0) })
    }

    private static let keys = ["a", "b", "c", "d", "e"]
}
