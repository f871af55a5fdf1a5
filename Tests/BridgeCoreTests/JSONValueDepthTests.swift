import Foundation
import Testing

@testable import BridgeCore

/// `JSONValue.maximumDepth`: the writers stop at the nesting Foundation reads, write a deeper
/// container as `null`, and never recurse past it, even on a small stack.
@Suite("JSON value depth limit")
struct JSONValueDepthTests {
    static let limit = JSONValue.maximumDepth

    /// `count` arrays one inside the other (or objects, each under the key `k`) around `innermost`.
    static func nested(_ count: Int, objects: Bool = false, around innermost: JSONValue) -> JSONValue {
        var value = innermost
        for _ in 0..<count { value = objects ? .object(["k": value]) : .array([value]) }
        return value
    }

    /// `count` containers in all, the innermost empty.
    static func nested(_ count: Int, objects: Bool = false) -> JSONValue {
        nested(count - 1, objects: objects, around: objects ? .object([:]) : .array([]))
    }

    static func text(arrays count: Int) -> Data {
        Data((String(repeating: "[", count: count) + String(repeating: "]", count: count)).utf8)
    }

    /// The limit is not ours to pick: it is the deepest document Foundation reads back.
    @Test func theLimitIsWhatFoundationReads() throws {
        #expect(try JSONValue(parsing: Self.text(arrays: Self.limit)) == Self.nested(Self.limit))
        #expect(throws: (any Error).self) { try JSONValue(parsing: Self.text(arrays: Self.limit + 1)) }
        #expect((try? JSONSerialization.jsonObject(with: Self.text(arrays: Self.limit))) != nil)
        #expect((try? JSONSerialization.jsonObject(with: Self.text(arrays: Self.limit + 1))) == nil)
    }

    @Test(arguments: [false, true])
    func atTheLimitTheValueIsWrittenWhole(objects: Bool) throws {
        let value = Self.nested(Self.limit, objects: objects)
        #expect(try JSONValue(parsing: value.canonicalData) == value)
        #expect(value.canonicalString == String(decoding: value.canonicalData, as: UTF8.self))
        #expect(try JSONValue(parsing: Data(value.indentedString().utf8)) == value)
        #expect(!value.canonicalString.contains("null"))
    }

    /// One level more, or a thousand: what is written is the value cut at the limit, `null` in the
    /// place of the first container too deep, and Foundation reads it back.
    @Test(arguments: [(false, 1), (true, 1), (false, 1_000), (true, 1_000)])
    func pastTheLimitTheDeepestContainerIsNull(objects: Bool, extra: Int) throws {
        let value = Self.nested(Self.limit + extra, objects: objects, around: "leaf")
        let cut = Self.nested(Self.limit, objects: objects, around: .null)
        // `cut` is within the limit, so written whole (above) and read back: parsed once here.
        if extra == 1 { #expect(try JSONValue(parsing: value.canonicalData) == cut) }
        #expect(value.canonicalString == cut.canonicalString)
        #expect(value.indentedString(indent: 1) == cut.indentedString(indent: 1))
        #expect(!value.canonicalString.contains("leaf"))
    }

    /// Siblings are cut alone: a shallow member beside a too-deep one is kept.
    @Test func onlyTheTooDeepBranchIsCut() throws {
        let value: JSONValue = ["deep": Self.nested(Self.limit + 5), "shallow": [1, "two", ["three": true]]]
        let read = try JSONValue(parsing: value.canonicalData)
        #expect(read["shallow"] == value["shallow"])
        #expect(read["deep"] == Self.nested(Self.limit - 1, around: .null))
    }

    /// The stored session puts `JSONValue`s inside its own objects; the limit counts those levels,
    /// so the stored row is always one `JSONDecoder` reads back.
    @Test func aStoredSessionWithADeepBodyReadsBack() throws {
        var session = ActivitySession(identity: ActivityIdentity(slug: "gh-1", name: "n"))
        session.rejectedBody = Self.nested(Self.limit + 10)
        let text = try #require(ActivitySessionJSON.text(of: session))
        let read = try JSONDecoder().decode(ActivitySession.self, from: Data(text.utf8))
        #expect(read.rejectedBody == Self.nested(Self.limit - 1, around: .null))
        session.rejectedBody = Self.nested(Self.limit - 1)
        let whole = try #require(ActivitySessionJSON.text(of: session))
        #expect(try JSONDecoder().decode(ActivitySession.self, from: Data(whole.utf8)) == session)
    }

    /// Ten thousand levels written on a thread with a 512 KB stack: the writers stop at the limit
    /// and hold the containers they are in on the heap, so the stack is never at risk. (The value
    /// is built and freed on a thread with a large stack: freeing a nested value recurses, in the
    /// runtime, so the holder is emptied there, after the small thread is done with it.)
    @Test func deepNestingOnASmallStack() throws {
        let written = Self.onThread(stackSize: 256 << 20) { () -> [String] in
            let holder = ResultBox<JSONValue>()
            holder.set(Self.nested(10_000, around: 1))
            let texts = Self.onThread(stackSize: 512 << 10) { () -> [String] in
                let value = holder.get()
                return [value.canonicalString, String(decoding: value.canonicalData, as: UTF8.self)]
                    + [value.indentedString()]
            }
            holder.clear()
            return texts
        }
        let cut = Self.nested(Self.limit, around: .null)
        #expect(written[0] == cut.canonicalString)
        #expect(written[1] == written[0])
        #expect(written[2] == cut.indentedString())
    }

    /// Runs `body` on a new thread of `stackSize` bytes and waits for its result.
    static func onThread<Result: Sendable>(stackSize: Int, _ body: @escaping @Sendable () -> Result) -> Result {
        let box = ResultBox<Result>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.set(body())
            done.signal()
        }
        thread.stackSize = stackSize
        thread.start()
        done.wait()
        return box.get()
    }
}

/// A value handed between threads; the semaphore orders the write before the read, the lock makes
/// that visible to the checker.
private final class ResultBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value?

    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func get() -> Value { lock.withLock { value! } }
    func clear() { lock.withLock { value = nil } }
}
