/// How `deliveries.id` holds an `X-GitHub-Delivery`.
///
/// GitHub's delivery ids are version-1 UUIDs, whose text starts with the low 32 bits of their
/// clock: in text order the deliveries of one second lie 1/429 of the key apart, and the clock
/// walks the whole key every 7 minutes. Kept as sent, each new delivery read a leaf somewhere in
/// a month of ids, which the page cache no longer held once the index outgrew it: with a million
/// runs stored that was the whole difference in ack p99 at 1,000/s from an empty database. Stored
/// with the clock's fields most significant first, the ids sort by time and new ones land at the
/// index's end, which stays cached; a redelivery repeats the id, so it still finds its row.
///
/// The mapping is one to one over all strings, so no two ids share a stored form: a version-1
/// UUID (lowercase, as GitHub sends it) `llllllll-mmmm-1hhh-ssss-nnnnnnnnnnnn` is stored as
/// `1hhh-mmmm-llllllll-ssss-nnnnnnnnnnnn` (the same characters); an id that already has that
/// shape, alone or behind `~`s, is stored with one more `~` in front; any other id as it is.
/// Rows stored before this layout keep their ids as sent (`legacyCutoff`).
public enum DeliveryKey {
    /// The form `id` is stored in.
    public static func stored(_ id: String) -> String {
        let bytes = Array(id.utf8)
        if isVersion1UUID(bytes) { return reordered(bytes, from: uuidFields, to: storedFields) }
        if isStoredShape(bytes.drop { $0 == tilde }) { return "~" + id }
        return id
    }

    /// The id a stored form was made from (`stored(_:)` undone); a row stored before this layout
    /// reads as itself.
    public static func id(fromStored stored: String) -> String {
        let bytes = Array(stored.utf8)
        if isStoredShape(bytes[...]) { return reordered(bytes, from: storedFields, to: uuidFields) }
        if bytes.first == tilde, isStoredShape(bytes.drop { $0 == tilde }) { return String(stored.dropFirst()) }
        return stored
    }

    /// When a version-1 UUID id was made (its clock, as Unix time); nil for any other id. GitHub
    /// makes a delivery's id when it first sends it, so a redelivery carries the first one's time.
    public static func timestamp(ofID id: String) -> Double? {
        let bytes = Array(id.utf8)
        guard isVersion1UUID(bytes) else { return nil }
        func field(_ range: Range<Int>) -> UInt64 {
            bytes[range].reduce(0) { $0 << 4 | UInt64(hexValue($1)) }
        }
        let ticks = (field(15..<18) << 48) | (field(9..<13) << 32) | field(0..<8)
        // The UUID clock counts 100 ns from 1582-10-15.
        return (Double(ticks) - Double(0x01B2_1DD2_1381_4000)) / 10_000_000
    }

    /// Whether a row made before the time-ordered layout could hold `id` as sent: only a version-1
    /// id made before the newest delivery then stored can (`legacyCutoff`, the time of that
    /// delivery), with an hour's slack for GitHub's clock against ours. Any other id is stored as
    /// sent in both layouts, and a new delivery's id is newer than the cutoff, so this costs a second
    /// lookup only for a redelivery of a delivery from before the upgrade.
    public static func mayBeStoredAsSent(_ id: String, legacyCutoff: Double) -> Bool {
        guard legacyCutoff > 0, let made = timestamp(ofID: id) else { return false }
        return made <= legacyCutoff + 3_600
    }

    // MARK: Shapes

    private static let tilde = UInt8(ascii: "~")
    private static let dash = UInt8(ascii: "-")
    private static let one = UInt8(ascii: "1")
    /// Low, mid, high (version digit included), sequence and node, where each sits as sent.
    private static let uuidFields = [0..<8, 9..<13, 14..<18, 19..<23, 24..<36]
    /// The same fields where the stored form puts them: high, mid, low, sequence, node.
    private static let storedFields = [10..<18, 5..<9, 0..<4, 19..<23, 24..<36]

    private static func isVersion1UUID(_ bytes: [UInt8]) -> Bool {
        has(bytes[...], dashesAt: [8, 13, 18, 23]) && bytes[14] == one
    }

    private static func isStoredShape(_ bytes: ArraySlice<UInt8>) -> Bool {
        has(bytes, dashesAt: [4, 9, 18, 23]) && bytes[bytes.startIndex] == one
    }

    /// 36 bytes, dashes exactly at `dashes`, lowercase hex digits everywhere else.
    private static func has(_ bytes: ArraySlice<UInt8>, dashesAt dashes: Set<Int>) -> Bool {
        guard bytes.count == 36 else { return false }
        for (offset, byte) in bytes.enumerated() {
            if dashes.contains(offset) {
                guard byte == dash else { return false }
            } else {
                guard isLowercaseHex(byte) else { return false }
            }
        }
        return true
    }

    /// Moves each field from its place in `source` to its place in the other shape; the dashes
    /// fall where the target shape has them.
    private static func reordered(_ bytes: [UInt8], from source: [Range<Int>], to target: [Range<Int>]) -> String {
        var result = [UInt8](repeating: dash, count: 36)
        for (from, to) in zip(source, target) {
            result.replaceSubrange(to, with: bytes[from])
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        byte <= UInt8(ascii: "9") ? byte - UInt8(ascii: "0") : byte - UInt8(ascii: "a") + 10
    }
}
