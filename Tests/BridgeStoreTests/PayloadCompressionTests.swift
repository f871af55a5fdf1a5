import BridgeStore
import Foundation
import Testing

/// The payload codec on its own, on many threads at once as the HTTP threads use it.
@Suite("payload compression")
struct PayloadCompressionTests {
    static func body(_ index: Int) -> Data {
        let fields = (0..<60).map { #""field_\#($0)":"https://github.com/acme/repo-\#(index % 7)/\#($0 * index)""# }
        return Data(("{\"index\":\(index)," + fields.joined(separator: ",") + "}").utf8)
    }

    @Test("payloads compressed on many threads at once each come back as they were")
    func concurrentCompression() async throws {
        let results = await withTaskGroup(of: (Int, Bool, PayloadCompression.Encoding).self) { group in
            for index in 0..<400 {
                group.addTask {
                    let body = Self.body(index)
                    let stored = PayloadCompression.stored(body)
                    return (index, PayloadCompression.payload(stored, size: body.count) == body, stored.encoding)
                }
            }
            var all: [(Int, Bool, PayloadCompression.Encoding)] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 400)
        #expect(results.allSatisfy { $0.1 }, "payloads that did not come back: \(results.filter { !$0.1 }.map(\.0))")
        #expect(results.allSatisfy { $0.2 == .lz4 })
    }

    @Test("sizes: empty stays empty, tiny and random bytes stay as they are, a wrong size reads as nil")
    func edges() {
        #expect(PayloadCompression.stored(Data()) == .init(encoding: .identity, bytes: Data()))
        #expect(PayloadCompression.stored(Data("{}".utf8)).encoding == .identity)
        let noise = Data((0..<2_000).map { _ in UInt8.random(in: 0...255) })
        #expect(PayloadCompression.stored(noise) == .init(encoding: .identity, bytes: noise))
        let body = Self.body(3)
        let stored = PayloadCompression.stored(body)
        #expect(stored.bytes.count * 3 < body.count)
        #expect(PayloadCompression.payload(stored, size: body.count - 1) == nil)
        #expect(PayloadCompression.payload(stored, size: body.count + 1) == nil)
        // The same body twice compresses to the same bytes.
        #expect(PayloadCompression.stored(body) == stored)
    }
}
