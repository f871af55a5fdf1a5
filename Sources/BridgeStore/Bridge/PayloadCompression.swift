import CZlib
import Foundation

/// How the store keeps a delivery's raw payload: deflated (zlib format) when that is smaller.
///
/// A webhook body is 5–25 KB of JSON, mostly repeated URLs; deflated at level 1 it is a fifth of
/// that. Stored as is, each one spilled over three or four overflow pages, which every commit
/// wrote to the WAL and every checkpoint copied again: the largest share of the store's write
/// volume. Deflating costs tens of microseconds and is done on the HTTP thread that received the
/// delivery, not on the store's queue; inflating happens only when someone reads a payload.
public enum PayloadCompression {
    /// The `payload_encoding` column.
    public enum Encoding: String, Sendable {
        case identity
        case deflate
    }

    /// A payload as it goes into the `payload` column.
    public struct Stored: Sendable, Equatable {
        public var encoding: Encoding
        public var bytes: Data

        public init(encoding: Encoding, bytes: Data) {
            self.encoding = encoding
            self.bytes = bytes
        }
    }

    /// Level 1: nearly all of the size gain of level 6 (1.8 KB against 1.6 KB for an 8.7 KB job
    /// event) at half the time.
    static let level: Int32 = 1

    /// `payload` deflated, or as it is when deflating would not make it smaller.
    public static func stored(_ payload: Data) -> Stored {
        guard !payload.isEmpty else { return Stored(encoding: .identity, bytes: payload) }
        var capacity = compressBound(uLong(payload.count))
        var output = Data(count: Int(capacity))
        let result = output.withUnsafeMutableBytes { (target: UnsafeMutableRawBufferPointer) -> Int32 in
            payload.withUnsafeBytes { (source: UnsafeRawBufferPointer) -> Int32 in
                compress2(
                    target.baseAddress!.assumingMemoryBound(to: Bytef.self), &capacity,
                    source.baseAddress!.assumingMemoryBound(to: Bytef.self), uLong(payload.count), level)
            }
        }
        guard result == Z_OK, Int(capacity) < payload.count else { return Stored(encoding: .identity, bytes: payload) }
        output.count = Int(capacity)
        return Stored(encoding: .deflate, bytes: output)
    }

    /// The payload a stored value holds; nil when deflated bytes do not inflate to exactly
    /// `size` bytes (a damaged row).
    public static func payload(_ stored: Stored, size: Int) -> Data? {
        switch stored.encoding {
        case .identity:
            return stored.bytes
        case .deflate:
            guard size > 0 else { return stored.bytes.isEmpty ? Data() : nil }
            var length = uLongf(size)
            var output = Data(count: size)
            let result = output.withUnsafeMutableBytes { (target: UnsafeMutableRawBufferPointer) -> Int32 in
                stored.bytes.withUnsafeBytes { (source: UnsafeRawBufferPointer) -> Int32 in
                    guard let sourceBase = source.baseAddress else { return Z_DATA_ERROR }
                    return uncompress(
                        target.baseAddress!.assumingMemoryBound(to: Bytef.self), &length,
                        sourceBase.assumingMemoryBound(to: Bytef.self), uLong(stored.bytes.count))
                }
            }
            guard result == Z_OK, Int(length) == size else { return nil }
            return output
        }
    }
}
