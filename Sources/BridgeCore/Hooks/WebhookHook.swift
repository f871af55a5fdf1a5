/// One webhook as GitHub lists it (`GET /repos/{owner}/{repo}/hooks`, `/orgs/{org}/hooks`): the
/// fields the bridge needs to tell whether it delivers what the bridge reads. GitHub never shows
/// a secret back; `config.secret` is `"********"` when one is set and absent when none is.
public struct WebhookHook: Sendable, Equatable {
    public var id: Int
    public var name: String
    public var active: Bool
    public var events: [String]
    public var url: String?
    /// `json` or `form`.
    public var contentType: String?
    /// `"0"` verifies TLS, `"1"` skips it (GitHub sends it as a string, sometimes as a number).
    public var insecureSSL: String
    public var hasSecret: Bool

    public init(
        id: Int, name: String = "web", active: Bool, events: [String], url: String?, contentType: String?,
        insecureSSL: String, hasSecret: Bool
    ) {
        self.id = id
        self.name = name
        self.active = active
        self.events = events
        self.url = url
        self.contentType = contentType
        self.insecureSSL = insecureSSL
        self.hasSecret = hasSecret
    }

    /// Reads one entry of GitHub's list; nil without an id (nothing could be done with it).
    public init?(_ value: JSONValue) {
        guard let id = value["id"]?.intValue else { return nil }
        let config = value["config"]
        self.init(
            id: id, name: value["name"]?.stringValue ?? "web", active: value["active"]?.boolValue ?? false,
            events: value["events"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            url: config?["url"]?.stringValue, contentType: config?["content_type"]?.stringValue,
            insecureSSL: config?["insecure_ssl"]?.stringValue ?? config?["insecure_ssl"]?.intValue.map(String.init)
                ?? "0",
            hasSecret: !(config?["secret"]?.stringValue ?? "").isEmpty)
    }

    /// Whether GitHub sends every event (`*`) or both the bridge reads.
    public func delivers(_ event: String) -> Bool {
        events.contains(event) || events.contains("*")
    }

    /// As `github hooks --json` prints it (never a secret: whether one is set).
    public var json: JSONValue {
        [
            "id": .number(Double(id)), "name": .string(name), "active": .bool(active),
            "events": .array(events.map { .string($0) }), "url": url.map { .string($0) } ?? .null,
            "content_type": contentType.map { .string($0) } ?? .null, "insecure_ssl": .string(insecureSSL),
            "secret_set": .bool(hasSecret),
        ]
    }
}
