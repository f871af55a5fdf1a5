/// Reads a fuzzer's input as a stream of choices: every read past the end returns zero, so any
/// byte string, even an empty one, describes exactly one test case and the fuzzer never has to
/// learn a length prefix before it can reach the code under test.
public struct FuzzBytes: Sendable {
    private let bytes: [UInt8]
    private var position = 0

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var isExhausted: Bool { position >= bytes.count }

    /// The next byte, or 0 past the end.
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// The next `count` bytes (fewer at the end).
    public mutating func bytes(_ count: Int) -> ArraySlice<UInt8> {
        let end = min(bytes.count, position + max(0, count))
        defer { position = end }
        return bytes[position..<end]
    }

    /// Everything not read yet.
    public mutating func rest() -> ArraySlice<UInt8> {
        bytes(bytes.count - position)
    }

    /// A `Double` from 8 bytes (little-endian bit pattern), any of them NaN or infinite.
    public mutating func double() -> Double {
        var bits: UInt64 = 0
        for (shift, byte) in bytes(8).enumerated() {
            bits |= UInt64(byte) << (8 * UInt64(shift))
        }
        return Double(bitPattern: bits)
    }
}
