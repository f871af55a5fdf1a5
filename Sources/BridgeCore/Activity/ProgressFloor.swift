/// The lowest `progress` the card may show: per step with weights (each step fills from 0), for
/// the whole run without.
public struct ProgressFloor: Sendable, Equatable, Codable {
    public var run: RunKey
    public var step: Int
    public var progress: Double
}
