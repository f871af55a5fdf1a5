/// Why a `GET /auth/me` body could not be read as a `PushWardUsage`.
///
/// Typed, with the member named, because the answer comes from a server the bridge does not
/// control: whoever reads the log has to see whether PushWard changed a field, a proxy answered
/// instead of PushWard, or the bridge is wrong, without a debugger.
public enum PushWardUsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The body is not JSON; the text is its first 80 bytes (an HTML page from a proxy shows here).
    case invalidJSON(String)
    /// The body is JSON but not an object.
    case notAnObject
    /// A required member is absent or `null`; the text is its name.
    case missingField(String)
    /// A member is present with the wrong type or value; `expected` says what it should be.
    case invalidField(String, expected: String)

    public var description: String {
        switch self {
        case .invalidJSON(let start):
            "PushWard's usage answer is not JSON (it starts \"\(start)\"); check that pushward.url is the API"
        case .notAnObject:
            "PushWard's usage answer is JSON but not an object"
        case .missingField(let name):
            "PushWard's usage answer has no '\(name)'"
        case .invalidField(let name, let expected):
            "PushWard's usage answer has '\(name)' that is not \(expected)"
        }
    }
}
