import Foundation

/// A PostgreSQL connection string read as libpq reads it (`fe-connect.c`: `conninfo_uri_parse`
/// and `conninfo_parse`), for what the bridge prints of it and what it checks before connecting:
/// the secrets redacted, the hosts, the parameters.
///
/// Why its own parser: the location is printed by `check-config`, every "cannot connect" log line
/// (once a second under `Restart=always`), CLI errors and the admin API's 503. Generated passwords
/// routinely hold `?`, `#`, `/`, `@` and `%`, and a redaction that stops the user information at
/// the first `/` or `?` (as a URL parser would) printed such a password whole, while libpq, which
/// stops only at `@` or `/`, read it as the password. So redaction follows libpq's grammar, and
/// where libpq would misread a raw `/` or `@` in a password, it hides everything that could be
/// part of it rather than guess.
///
/// Two forms, both taken by `PQconnectdb`:
/// - a URI, `postgresql://[user[:password]@][host][:port][,…][/dbname][?key=value&…]`, whose parts
///   are percent-decoded;
/// - key=value pairs, `host=db user=bridge password='it''s'`, separated by white space, a value
///   in single quotes with `\'` and `\\` escapes.
public struct PostgresConnectionString: Sendable, Equatable {
    public enum Form: Sendable, Equatable {
        case uri
        case keywords
    }

    /// The keywords whose values are secrets: shown as `***`.
    public static let secretKeywords: Set<String> = ["password", "sslpassword"]
    /// The keywords libpq knows (`PQconndefaults`), for telling a key=value string from a file path.
    public static let keywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "channel_binding", "connect_timeout",
        "client_encoding", "options", "application_name", "fallback_application_name", "keepalives",
        "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "replication", "gssencmode",
        "sslmode", "sslnegotiation", "sslcompression", "sslcert", "sslkey", "sslpassword", "sslcertmode",
        "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version",
        "ssl_max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs",
        "load_balance_hosts", "require_auth", "scram_client_key", "scram_server_key",
    ]

    public let form: Form
    /// The text as given.
    public let text: String
    /// The text with every secret replaced by `***`: what may be printed.
    public let redacted: String
    /// Each keyword given, percent-decoded (URI) or unquoted (key=value); secrets included, so
    /// this is never printed.
    public let parameters: [String: String]
    /// The hosts to connect to (several for a failover list), decoded; empty: libpq's default (a
    /// Unix socket).
    public let hosts: [String]
    /// Every text the redaction hid (raw and decoded): what `scrubbed` removes from libpq's own
    /// messages, which quote what they could not read ("invalid integer value \"Wm3\" for
    /// connection option \"port\"" for a password with a raw `/`).
    let hidden: [String]

    /// Reads `text` as a URI (`postgresql://` or `postgres://`) or key=value string; nil when it is
    /// neither (a file path, say).
    public init?(_ text: String) {
        if let scheme = text.range(of: "://"),
            ["postgresql", "postgres"].contains(text[..<scheme.lowerBound].lowercased())
        {
            self.init(uri: text, afterScheme: scheme.upperBound)
        } else if let pairs = Self.keywordPairs(text) {
            self.init(keywords: text, pairs: pairs)
        } else {
            return nil
        }
    }

    /// `text` redacted when it is a connection string, else as it is (a file path).
    public static func redacting(_ text: String) -> String {
        PostgresConnectionString(text)?.redacted ?? text
    }

    /// `message` (libpq's, about this connection string) without any part of a secret: each hidden
    /// text, and each piece of it between the characters libpq splits a URI at, replaced by `***`.
    public func scrubbed(_ message: String) -> String {
        let separators = Set("/@:?#%,&= '\"\\")
        var pieces = Set(hidden.filter { !$0.isEmpty })
        for text in hidden {
            for piece in text.split(whereSeparator: { separators.contains($0) }) where piece.count >= 2 {
                pieces.insert(String(piece))
            }
        }
        var result = message
        // The longest first, so a piece inside a longer hidden text does not break it up.
        for piece in pieces.sorted(by: { $0.count > $1.count }) {
            result = result.replacingOccurrences(of: piece, with: "***")
        }
        return result
    }

    /// Whether the connection is certain to check the server's certificate or at least to be
    /// encrypted (`sslmode` `require`, `verify-ca` or `verify-full`), as libpq decides; false
    /// for its default `prefer`, which falls back to plain text silently.
    public var requiresTLS: Bool {
        ["require", "verify-ca", "verify-full"].contains(parameters["sslmode"]?.lowercased() ?? "prefer")
    }

    /// Whether every host is on this machine: a Unix socket directory (a path), `localhost` or a
    /// loopback address; with no host libpq uses its socket.
    public var isLocal: Bool {
        let all = hosts + (parameters["hostaddr"].map { $0.split(separator: ",").map(String.init) } ?? [])
        return all.allSatisfy { host in
            host.isEmpty || host.hasPrefix("/") || host.hasPrefix("@") || host.lowercased() == "localhost"
                || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
        }
    }

    // MARK: The URI form

    private init(uri text: String, afterScheme start: String.Index) {
        form = .uri
        self.text = text
        var parameters: [String: String] = [:]
        var hidden: [String] = []
        let rest = text[start...]
        // libpq looks for the user information up to the first `@` or `/` (not `?`). A raw `@`
        // or `/` inside a password makes it read something else; so everything from the first
        // `:` of the user information up to the last `@` before the path is hidden, and with a
        // `/` before any `@`, up to the last `@` of the whole text when there is one.
        let firstStop = rest.firstIndex { $0 == "@" || $0 == "/" }
        var visible = String(text[..<start])
        var hostStart = rest.startIndex
        if let lastAt = rest.lastIndex(of: "@"),
            firstStop.map({ rest[$0] == "@" || rest[..<$0].contains(":") }) ?? true
        {
            let userInformation = rest[..<lastAt]
            let user = userInformation.prefix { $0 != ":" }
            visible += String(user) + (user.count < userInformation.count ? ":***" : "") + "@"
            if let decoded = Self.percentDecoded(user), !decoded.isEmpty { parameters["user"] = decoded }
            if user.count < userInformation.count {
                let raw = userInformation.dropFirst(user.count + 1)
                parameters["password"] = Self.percentDecoded(raw) ?? ""
                hidden += [String(raw), parameters["password"] ?? ""]
            }
            hostStart = rest.index(after: lastAt)
        }
        let afterUser = rest[hostStart...]
        let netlocEnd = afterUser.firstIndex { $0 == "/" || $0 == "?" } ?? afterUser.endIndex
        let netloc = afterUser[..<netlocEnd]
        var hosts: [String] = []
        for entry in netloc.split(separator: ",", omittingEmptySubsequences: false) {
            // `[v6]:port` or `host:port`.
            let host: Substring
            if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") {
                host = entry[entry.index(after: entry.startIndex)..<close]
            } else {
                host = entry.prefix { $0 != ":" }
            }
            hosts.append(Self.percentDecoded(host) ?? String(host))
        }
        var tail = afterUser[netlocEnd...]
        var query: Substring?
        if let question = tail.firstIndex(of: "?") {
            query = tail[tail.index(after: question)...]
            tail = tail[..<question]
        }
        if tail.count > 1, let name = Self.percentDecoded(tail.dropFirst()) { parameters["dbname"] = name }
        visible += String(netloc) + String(tail)
        if let query {
            var shown: [String] = []
            for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
                let key = pair.prefix { $0 != "=" }
                let name = Self.percentDecoded(key) ?? String(key)
                let value = pair.count > key.count ? pair.dropFirst(key.count + 1) : ""
                parameters[name] = Self.percentDecoded(value) ?? String(value)
                let secret = Self.secretKeywords.contains(name.lowercased())
                if secret { hidden += [String(value), parameters[name] ?? ""] }
                shown.append(secret ? String(key) + "=***" : String(pair))
            }
            visible += "?" + shown.joined(separator: "&")
        }
        redacted = visible
        self.hidden = hidden
        self.parameters = parameters
        self.hosts =
            hosts.filter { !$0.isEmpty } + (parameters["host"].map { $0.split(separator: ",").map(String.init) } ?? [])
    }

    // MARK: The key=value form

    private init(keywords text: String, pairs: [(key: String, value: String, range: Range<String.Index>)]) {
        form = .keywords
        self.text = text
        var visible = ""
        var cursor = text.startIndex
        var parameters: [String: String] = [:]
        var hidden: [String] = []
        for pair in pairs {
            parameters[pair.key] = pair.value
            guard Self.secretKeywords.contains(pair.key) else { continue }
            visible += text[cursor..<pair.range.lowerBound] + "***"
            hidden += [String(text[pair.range]), pair.value]
            cursor = pair.range.upperBound
        }
        visible += text[cursor...]
        redacted = visible
        self.hidden = hidden
        self.parameters = parameters
        hosts = parameters["host"].map { $0.split(separator: ",").map(String.init) } ?? []
    }

    /// `conninfo_parse`: `key = value` pairs separated by white space, a value quoted with `'`
    /// (`\` escapes the next character) or ended by white space; nil unless every key is one
    /// libpq knows (so a file path with a `=` in its name stays a path), or a quote is unclosed.
    /// Each pair comes with its key, its unquoted value and the range of its value in `text`.
    static func keywordPairs(_ text: String) -> [(key: String, value: String, range: Range<String.Index>)]? {
        var pairs: [(key: String, value: String, range: Range<String.Index>)] = []
        var index = text.startIndex
        func skipSpace() { while index < text.endIndex, text[index].isWhitespace { index = text.index(after: index) } }
        skipSpace()
        while index < text.endIndex {
            let keyStart = index
            while index < text.endIndex, !text[index].isWhitespace, text[index] != "=" {
                index = text.index(after: index)
            }
            let key = String(text[keyStart..<index])
            skipSpace()
            guard index < text.endIndex, text[index] == "=", keywords.contains(key) else { return nil }
            index = text.index(after: index)
            skipSpace()
            let valueStart = index
            var value = ""
            if index < text.endIndex, text[index] == "'" {
                index = text.index(after: index)
                var closed = false
                while index < text.endIndex {
                    let character = text[index]
                    index = text.index(after: index)
                    if character == "\\", index < text.endIndex {
                        value.append(text[index])
                        index = text.index(after: index)
                    } else if character == "'" {
                        closed = true
                        break
                    } else {
                        value.append(character)
                    }
                }
                guard closed else { return nil }
            } else {
                while index < text.endIndex, !text[index].isWhitespace {
                    if text[index] == "\\", text.index(after: index) < text.endIndex {
                        index = text.index(after: index)
                    }
                    value.append(text[index])
                    index = text.index(after: index)
                }
            }
            pairs.append((key, value, valueStart..<index))
            skipSpace()
        }
        return pairs.isEmpty ? nil : pairs
    }

    /// `%XX` decoded as UTF-8 (libpq's `conninfo_uri_decode`); nil for a malformed escape.
    static func percentDecoded<S: StringProtocol>(_ text: S) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(PercentEncoding.hexValue),
                let low = iterator.next().flatMap(PercentEncoding.hexValue)
            else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
