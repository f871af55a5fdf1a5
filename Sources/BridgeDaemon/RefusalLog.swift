import BridgeCore
import Foundation

/// The log lines of a listener's refusals (415, 400, 401, unknown paths, malformed or ignored
/// deliveries): each kind through its own `LogRateLimit`, so whoever can reach the listener cannot
/// decide how fast the journal fills, and a flood of one kind does not hide the first line of
/// another. The line that gets through carries `log.dropped`, the lines of its kind folded since
/// the last one, and every folded line counts in `log_lines_suppressed_total{line=kind}`.
///
/// Thread-safe: the limits are, and the kinds are fixed at creation.
public final class RefusalLog: Sendable {
    private let logger: Logger
    private let counters: Metrics
    private let limits: [String: LogRateLimit]

    public init(logger: Logger, counters: Metrics, kinds: [String], period: Double = 1) {
        self.logger = logger
        self.counters = counters
        self.limits = Dictionary(uniqueKeysWithValues: kinds.map { ($0, LogRateLimit(period: period)) })
    }

    /// Writes `message` at `level` unless a line of `kind` got through less than a period before
    /// `now`, in which case it is counted instead. A kind not given at creation is always written,
    /// so a forgotten kind loses no line.
    public func say(
        _ kind: String, _ level: Logger.Level, _ message: StaticString, _ metadata: [String: JSONValue],
        at now: UnixTime
    ) {
        var metadata = metadata
        if let limit = limits[kind] {
            guard let dropped = limit.admit(at: now) else {
                counters.add("log_lines_suppressed_total", labels: ["line": kind])
                return
            }
            if dropped > 0 { metadata["log.dropped"] = .number(Double(dropped)) }
        }
        logger.log(level, message, metadata)
    }
}
