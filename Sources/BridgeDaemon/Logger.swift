import BridgeCore
import Foundation

/// Structured logs: one line each on stderr, a constant message and dotted metadata keys
/// (`github.delivery`, `run.id`, `activity.slug`); a JSON object (journald keeps it as is) or
/// `time level message key=value …` text for a terminal (`LogFormat`).
///
/// Libraries take a logger; only the executable builds one. Secrets and payload bodies are never
/// passed to it.
public struct Logger: Sendable {
    public enum Level: String, Sendable, Comparable, CaseIterable {
        case debug, info, notice, warning, error

        var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    /// Where lines go; the default writes to stderr. Tests capture lines with their own sink.
    public typealias Sink = @Sendable (String) -> Void

    public var label: String
    /// Shared by every copy of this logger, so SIGHUP can change the level of all of them.
    private let level: LevelSetting
    private let sink: Sink
    private let clock: @Sendable () -> Date
    public let format: LogFormat

    public init(
        label: String, minimumLevel: Level = .info, sink: @escaping Sink = Logger.standardError,
        clock: @escaping @Sendable () -> Date = Date.init, format: LogFormat = .json
    ) {
        self.label = label
        self.format = format
        self.level = LevelSetting(minimumLevel)
        self.sink = sink
        self.clock = clock
    }

    public static let standardError: Sink = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// The least severe level written.
    public var minimumLevel: Level {
        get { level.value }
        nonmutating set { level.value = newValue }
    }

    public func log(_ level: Level, _ message: StaticString, _ metadata: [String: JSONValue] = [:]) {
        guard level >= minimumLevel else { return }
        sink(format.line(time: clock(), level: level, label: label, message: "\(message)", metadata: metadata))
    }

    public func debug(_ message: StaticString, _ metadata: [String: JSONValue] = [:]) { log(.debug, message, metadata) }
    public func info(_ message: StaticString, _ metadata: [String: JSONValue] = [:]) { log(.info, message, metadata) }
    public func notice(_ message: StaticString, _ metadata: [String: JSONValue] = [:]) {
        log(.notice, message, metadata)
    }
    public func warning(_ message: StaticString, _ metadata: [String: JSONValue] = [:]) {
        log(.warning, message, metadata)
    }
    public func error(_ message: StaticString, _ metadata: [String: JSONValue] = [:]) { log(.error, message, metadata) }

    /// RFC 3339 in UTC with milliseconds, without a formatter (they are not cheap, nor Sendable).
    public static func timestamp(_ date: Date) -> String {
        GitHubTimestamp.format(date.timeIntervalSince1970, milliseconds: true)
    }
}

/// A level several logger copies share.
final class LevelSetting: @unchecked Sendable {
    private let lock = NSLock()
    private var level: Logger.Level

    init(_ level: Logger.Level) {
        self.level = level
    }

    var value: Logger.Level {
        get {
            lock.lock()
            defer { lock.unlock() }
            return level
        }
        set {
            lock.lock()
            level = newValue
            lock.unlock()
        }
    }
}
