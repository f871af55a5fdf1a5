import CLZ4
import Foundation

/// How the store keeps a delivery's raw payload: LZ4-compressed when that is smaller.
///
/// A webhook body is 5–25 KB of JSON, mostly repeated URLs. Stored as is, each one spilled over
/// three or four overflow pages, which every commit wrote to the WAL and every checkpoint copied
/// again: the largest share of the store's write volume. Compressed (an 8.7 KB job event becomes
/// about 2.5 KB) it fits in its row's page. LZ4 rather than zlib: deflate at its fastest level
/// took about 60 µs a body, a sixth of all the CPU a delivery costs; LZ4 a few. It is done on the
/// HTTP thread that received the delivery, not on the store's queue; decompressing happens only
/// when someone reads a payload.
public enum PayloadCompression {
    /// The `payload_encoding` column.
    public enum Encoding: String, Sendable {
        case identity
        /// An LZ4 block (no frame): its size is the row's `payload_bytes`.
        case lz4
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

    /// `payload` compressed, or as it is when compressing would not make it smaller.
    public static func stored(_ payload: Data) -> Stored {
        guard !payload.isEmpty, payload.count <= Int(LZ4_MAX_INPUT_SIZE) else {
            return Stored(encoding: .identity, bytes: payload)
        }
        let capacity = Int(LZ4_compressBound(Int32(payload.count)))
        var output = Data(count: capacity)
        let written = output.withUnsafeMutableBytes { (target: UnsafeMutableRawBufferPointer) -> Int32 in
            payload.withUnsafeBytes { (source: UnsafeRawBufferPointer) -> Int32 in
                LZ4_compress_default(
                    source.baseAddress!.assumingMemoryBound(to: CChar.self),
                    target.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(payload.count), Int32(capacity))
            }
        }
        guard written > 0, Int(written) < payload.count else { return Stored(encoding: .identity, bytes: payload) }
        output.count = Int(written)
        return Stored(encoding: .lz4, bytes: output)
    }

    /// The payload a stored value holds; nil when compressed bytes do not decompress to exactly
    /// `size` bytes (a damaged row).
    public static func payload(_ stored: Stored, size: Int) -> Data? {
        switch stored.encoding {
        case .identity:
            return stored.bytes
        case .lz4:
            guard size > 0, size <= Int(LZ4_MAX_INPUT_SIZE), !stored.bytes.isEmpty else {
                return size == 0 && stored.bytes.isEmpty ? Data() : nil
            }
            var output = Data(count: size)
            let read = output.withUnsafeMutableBytes { (target: UnsafeMutableRawBufferPointer) -> Int32 in
                stored.bytes.withUnsafeBytes { (source: UnsafeRawBufferPointer) -> Int32 in
                    LZ4_decompress_safe(
                        source.baseAddress!.assumingMemoryBound(to: CChar.self),
                        target.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(stored.bytes.count),
                        Int32(size))
                }
            }
            guard Int(read) == size else { return nil }
            return output
        }
    }
}
