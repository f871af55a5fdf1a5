/// The delivery orders of the end-to-end test "deliveries shuffled and duplicated", as indices into
/// the in-order list, so a test of the pure core can replay exactly the orders the daemon got and
/// a failure can name the order it met.
///
/// Each order is every delivery once plus `duplicates` of them again, shuffled; the orders are drawn
/// one after another from one `SplitMix64(seed:)`, so the same seed always gives the same orders
/// (Swift's shuffle depends on the element count and the generator only).
public struct ShuffledReplay: Sendable, Equatable {
    public var seed: UInt64
    public var round: Int
    /// Indices into the in-order deliveries, repeated ones included.
    public var order: [Int]

    /// `rounds` orders of `count` deliveries drawn from `seed`.
    public static func orders(count: Int, seed: UInt64, rounds: Int, duplicates: Int = 4) -> [ShuffledReplay] {
        var generator = SplitMix64(seed: seed)
        let indices = Array(0..<count)
        return (0..<rounds).map { round in
            var order = indices + indices.shuffled(using: &generator).prefix(duplicates)
            order.shuffle(using: &generator)
            return ShuffledReplay(seed: seed, round: round, order: order)
        }
    }

    /// "seed 7 round 1: 3 0 14 …", for a failure message.
    public var description: String {
        "seed \(seed) round \(round): " + order.map(String.init).joined(separator: " ")
    }
}
