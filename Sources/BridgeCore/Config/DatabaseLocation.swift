import Foundation

/// Which engine the `database` setting selects: a path is an SQLite file, a `postgresql://` (or
/// `postgres://`) URI is a PostgreSQL database, and anything else that looks like a URI is refused.
///
/// Refused rather than guessed: before this type, `"mysql://db/bridge"` or a mistyped
/// `"postgressql://…"` was taken as a relative file name, and the daemon quietly created
/// `mysql:/db/bridge` under its working directory, answering 2xx into a database nobody reads.
public enum DatabaseLocation: Sendable, Equatable {
    case sqlite(path: String)
    /// A libpq connection URI or key=value string, kept exactly as given (libpq parses it).
    case postgresql(uri: String)

    /// The schemes libpq accepts for a connection URI.
    public static let postgresSchemes = ["postgresql", "postgres"]

    /// Reads `text` as the setting under `key` (`database`, `PUSHWARD_DATABASE`, …), so the error names
    /// where the value came from.
    public init(parsing text: String, key: String = "database") throws(ConfigurationError) {
        guard !text.isEmpty else {
            throw ConfigurationError(key: key, problem: "is empty: give a file path for SQLite or a postgresql:// URI")
        }
        guard let scheme = Self.scheme(of: text) else {
            // libpq's key=value form (`host=db user=bridge password=…`): every key one libpq knows.
            if PostgresConnectionString(text)?.form == .keywords {
                self = .postgresql(uri: text)
            } else {
                self = .sqlite(path: text)
            }
            return
        }
        guard Self.postgresSchemes.contains(scheme.lowercased()) else {
            throw ConfigurationError(
                key: key,
                problem: "\"\(scheme)://\" is not a database this daemon can use: give a file path for SQLite "
                    + "(var/pushward-bridge.sqlite) or a PostgreSQL URI (postgresql://user@host/db)")
        }
        self = .postgresql(uri: text)
    }

    /// What logs, `check-config` and the status page may show: the path, or the URI with any
    /// password (in the user part or a `password=` parameter) replaced by `***`.
    public var redacted: String {
        switch self {
        case .sqlite(let path): return path
        case .postgresql(let uri): return Self.redacting(uri)
        }
    }

    /// The scheme of `text` if it starts like a URI (`letter *(letter / digit / + - .) "://"`), else nil.
    /// A Windows-style `C:\…` or a file named `a:b` has no `//` and stays a path.
    static func scheme(of text: String) -> String? {
        guard let separator = text.range(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound]
        guard let first = scheme.unicodeScalars.first, Self.isLetter(first),
            scheme.unicodeScalars.allSatisfy({
                Self.isLetter($0) || ("0"..."9").contains($0) || "+-.".contains(Character($0))
            })
        else { return nil }
        return String(scheme)
    }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    /// `postgresql://user:secret@host/db?password=x&sslmode=require` →
    /// `postgresql://user:***@host/db?password=***&sslmode=require`, read by libpq's grammar
    /// (`PostgresConnectionString`), key=value strings too. Works on any text, parsed or not, so a
    /// value that was refused is never shown with its password either.
    public static func redacting(_ uri: String) -> String {
        PostgresConnectionString.redacting(uri)
    }

    /// `message`, an error about connecting to `uri`, with no part of its secrets
    /// (`PostgresConnectionString.scrubbed`): libpq quotes what it could not read of it.
    public static func scrubbing(_ message: String, of uri: String) -> String {
        PostgresConnectionString(uri)?.scrubbed(message) ?? message
    }
}
