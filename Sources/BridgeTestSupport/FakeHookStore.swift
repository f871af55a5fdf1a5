import BridgeCore
import Foundation
import WebhookServer

/// The webhooks of the fake GitHub (`FakeGitHubAPI`), kept as GitHub keeps them: listed in pages
/// with `Link` headers, created with `POST …/hooks` and changed with `PATCH …/hooks/{id}`, under
/// `/repos/{owner}/{repo}` and `/orgs/{org}`. It refuses what GitHub refuses (422 for a name other
/// than `web`, an unknown event, a missing URL, a second hook on the same URL; 403 or 404 for a
/// credential without the webhook permission), replaces `config` as a whole on a PATCH (a PATCH
/// without `config.secret` leaves the hook with none) and never shows a secret back
/// (`"secret": "********"`).
public final class FakeHookStore: @unchecked Sendable {
    /// What the credential may do with one owner's hooks.
    public enum Access: Sendable {
        case write
        /// Lists them; a write is 403.
        case read
        /// 403 for everything ("Resource not accessible by personal access token").
        case forbidden
        /// 404 for everything: GitHub's answer where it will not admit the repository exists.
        case hidden
    }

    /// One hook as stored, secret included (never answered).
    public struct Hook: Sendable, Equatable {
        public var id: Int
        public var name: String
        public var active: Bool
        public var events: [String]
        public var url: String?
        public var contentType: String
        public var insecureSSL: String
        public var secret: String?
    }

    /// One write GitHub received: `POST` or `PATCH`, the path and the body.
    public struct Write: Sendable {
        public var method: String
        public var path: String
        public var body: JSONValue?
    }

    /// Events GitHub accepts for a hook: enough of its list to tell a misspelt one.
    public static let knownEvents: Set<String> = [
        "*", "push", "pull_request", "pull_request_review", "issues", "issue_comment", "release", "create",
        "delete", "deployment", "deployment_status", "status", "check_run", "check_suite", "workflow_job",
        "workflow_run", "workflow_dispatch", "repository", "member", "meta", "ping",
    ]

    private let lock = NSLock()
    private var hooks: [String: [Hook]] = [:]
    private var access: [String: Access] = [:]
    private var nextID = 100
    private var pageLimit = 100
    private var written: [Write] = []

    public init() {}

    // MARK: What the test sets and reads

    /// Adds a hook under `owner` (`/repos/acme/widgets` or `/orgs/acme`); its id (`id`, else the next).
    @discardableResult
    public func add(
        owner: String, id: Int? = nil, active: Bool = true, events: [String] = ["workflow_job", "workflow_run"],
        url: String?, contentType: String = "json", insecureSSL: String = "0", secret: String? = nil
    ) -> Int {
        lock.withLock {
            let chosen = id ?? nextID
            nextID = max(nextID, chosen) + 1
            hooks[owner, default: []].append(
                Hook(
                    id: chosen, name: "web", active: active, events: events, url: url, contentType: contentType,
                    insecureSSL: insecureSSL, secret: secret))
            return chosen
        }
    }

    /// The hooks of `owner` as stored, secrets included.
    public func hooks(of owner: String) -> [Hook] {
        lock.withLock { hooks[owner] ?? [] }
    }

    public func setAccess(_ value: Access, for owner: String) {
        lock.withLock { access[owner] = value }
    }

    /// Pages hold at most this many hooks whatever `per_page` asks (GitHub may answer fewer).
    public func setPageLimit(_ limit: Int) {
        lock.withLock { pageLimit = max(1, limit) }
    }

    /// Every write received, in order (a refused one too).
    public var writes: [Write] { lock.withLock { written } }

    // MARK: Answering

    /// The answer to a request under `…/hooks`, or nil for any other path. `linkBase` is what
    /// `Link` URLs start with (the API's base URL as the client used it).
    func answer(_ request: HTTPRequest, path: String, linkBase: String) -> HTTPResponse? {
        let parts = path.split(separator: "/").map(String.init)
        let owner: String
        let rest: ArraySlice<String>
        if parts.count >= 4, parts[0] == "repos", parts[3] == "hooks" {
            owner = "/repos/\(parts[1])/\(parts[2])"
            rest = parts[4...]
        } else if parts.count >= 3, parts[0] == "orgs", parts[2] == "hooks" {
            owner = "/orgs/\(parts[1])"
            rest = parts[3...]
        } else {
            return nil
        }
        let body = request.body.isEmpty ? nil : try? JSONValue(parsing: request.body)
        if request.method != "GET" {
            lock.withLock { written.append(Write(method: request.method, path: path, body: body)) }
        }
        switch lock.withLock({ access[owner] ?? .write }) {
        case .hidden: return Self.message(404, "Not Found")
        case .forbidden: return Self.message(403, "Resource not accessible by personal access token")
        case .read where request.method != "GET":
            return Self.message(403, "Resource not accessible by personal access token")
        case .read, .write: break
        }
        let kind = owner.hasPrefix("/orgs/") ? "Organization" : "Repository"
        switch (request.method, rest.count) {
        case ("GET", 0):
            return list(owner: owner, query: request.query ?? "", kind: kind, linkBase: linkBase + owner + "/hooks")
        case ("POST", 0):
            return create(owner: owner, body: body, kind: kind)
        case ("GET", 1):
            guard let id = Int(rest[rest.startIndex]), let hook = hooks(of: owner).first(where: { $0.id == id }) else {
                return Self.message(404, "Not Found")
            }
            return .json(200, Self.json(hook, kind: kind))
        case ("PATCH", 1):
            guard let id = Int(rest[rest.startIndex]) else { return Self.message(404, "Not Found") }
            return update(owner: owner, id: id, body: body, kind: kind)
        case ("GET", 2) where rest.last == "deliveries":
            guard let id = Int(rest[rest.startIndex]), hooks(of: owner).contains(where: { $0.id == id }) else {
                return Self.message(404, "Not Found")
            }
            return .json(200, [])
        default:
            return Self.message(404, "Not Found")
        }
    }

    private func list(owner: String, query: String, kind: String, linkBase: String) -> HTTPResponse {
        let items = URLComponents(string: "?" + query)?.queryItems ?? []
        let asked = items.first { $0.name == "per_page" }?.value.flatMap(Int.init) ?? 30
        let perPage = min(max(1, asked), 100, lock.withLock { pageLimit })
        let page = max(1, items.first { $0.name == "page" }?.value.flatMap(Int.init) ?? 1)
        let all = hooks(of: owner)
        let slice = all.dropFirst((page - 1) * perPage).prefix(perPage)
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        let pages = (all.count + perPage - 1) / perPage
        if page < pages {
            headers.append(
                (
                    "Link",
                    "<\(linkBase)?per_page=\(asked)&page=\(page + 1)>; rel=\"next\", "
                        + "<\(linkBase)?per_page=\(asked)&page=\(pages)>; rel=\"last\""
                ))
        }
        return HTTPResponse(
            status: 200, headers: headers, body: JSONValue.array(slice.map { Self.json($0, kind: kind) }).canonicalData)
    }

    private func create(owner: String, body: JSONValue?, kind: String) -> HTTPResponse {
        guard let body, body.objectValue != nil else { return Self.message(400, "Problems parsing JSON") }
        if let name = body["name"]?.stringValue, name != "web" {
            return Self.invalid("Name must be 'web'")
        }
        let events = body["events"]?.arrayValue?.compactMap(\.stringValue) ?? ["push"]
        if let problem = Self.eventProblem(events) { return Self.invalid(problem) }
        guard let config = body["config"], let url = config["url"]?.stringValue, !url.isEmpty else {
            return Self.invalid("Config must contain URL for webhooks", field: "url")
        }
        if let problem = Self.configProblem(config) { return Self.invalid(problem) }
        if hooks(of: owner).contains(where: { $0.url == url }) {
            return Self.invalid("Hook already exists on this \(kind == "Organization" ? "organization" : "repository")")
        }
        let id = add(
            owner: owner, active: body["active"]?.boolValue ?? true, events: events, url: url,
            contentType: config["content_type"]?.stringValue ?? "form", insecureSSL: Self.insecureSSL(config) ?? "0",
            secret: config["secret"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 })
        guard let hook = hooks(of: owner).first(where: { $0.id == id }) else { return Self.message(500, "lost") }
        return .json(201, Self.json(hook, kind: kind))
    }

    private func update(owner: String, id: Int, body: JSONValue?, kind: String) -> HTTPResponse {
        guard let body, body.objectValue != nil else { return Self.message(400, "Problems parsing JSON") }
        guard var hook = hooks(of: owner).first(where: { $0.id == id }) else { return Self.message(404, "Not Found") }
        if let active = body["active"]?.boolValue { hook.active = active }
        if let events = body["events"]?.arrayValue?.compactMap(\.stringValue) { hook.events = events }
        // add_events and remove_events exist for repository hooks only.
        if kind == "Repository" {
            for event in body["add_events"]?.arrayValue?.compactMap(\.stringValue) ?? []
            where !hook.events.contains(event) {
                hook.events.append(event)
            }
            let removed = Set(body["remove_events"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            hook.events.removeAll { removed.contains($0) }
        }
        if let problem = Self.eventProblem(hook.events) { return Self.invalid(problem) }
        if let config = body["config"] {
            guard let url = config["url"]?.stringValue, !url.isEmpty else {
                return Self.invalid("Config must contain URL for webhooks", field: "url")
            }
            if let problem = Self.configProblem(config) { return Self.invalid(problem) }
            // The whole config is replaced: what the PATCH leaves out is gone, the secret first.
            hook.url = url
            hook.contentType = config["content_type"]?.stringValue ?? "form"
            hook.insecureSSL = Self.insecureSSL(config) ?? "0"
            hook.secret = config["secret"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        }
        let updated = hook
        lock.withLock {
            if let index = hooks[owner]?.firstIndex(where: { $0.id == id }) { hooks[owner]?[index] = updated }
        }
        return .json(200, Self.json(updated, kind: kind))
    }

    static func eventProblem(_ events: [String]) -> String? {
        events.first { !knownEvents.contains($0) }.map { "Invalid event: \"\($0)\"" }
    }

    static func configProblem(_ config: JSONValue) -> String? {
        if let type = config["content_type"]?.stringValue, !["json", "form"].contains(type) {
            return "Invalid content_type: \"\(type)\""
        }
        if config["insecure_ssl"] != nil, insecureSSL(config) == nil { return "Invalid insecure_ssl" }
        return nil
    }

    /// `"0"`/`"1"`, given as a string or a number.
    static func insecureSSL(_ config: JSONValue) -> String? {
        let value = config["insecure_ssl"]?.stringValue ?? config["insecure_ssl"]?.intValue.map(String.init)
        return value.flatMap { ["0", "1"].contains($0) ? $0 : nil }
    }

    /// A hook as GitHub answers it: the secret as `********` when set, absent when not.
    static func json(_ hook: Hook, kind: String) -> JSONValue {
        var config: [String: JSONValue] = [
            "content_type": .string(hook.contentType), "insecure_ssl": .string(hook.insecureSSL),
        ]
        if let url = hook.url { config["url"] = .string(url) }
        if hook.secret != nil { config["secret"] = "********" }
        return [
            "type": .string(kind), "id": .number(Double(hook.id)), "name": .string(hook.name),
            "active": .bool(hook.active), "events": .array(hook.events.map { .string($0) }),
            "config": .object(config), "updated_at": "2026-12-01T00:00:00Z", "created_at": "2026-12-01T00:00:00Z",
            "last_response": ["code": .null, "status": "unused", "message": .null],
        ]
    }

    static func message(_ status: Int, _ text: String) -> HTTPResponse {
        .json(status, ["message": .string(text), "documentation_url": "https://docs.github.com/rest/webhooks"])
    }

    /// GitHub's 422: `Validation Failed` with what failed in `errors`.
    static func invalid(_ text: String, field: String? = nil) -> HTTPResponse {
        var error: [String: JSONValue] = ["resource": "Hook", "code": "custom", "message": .string(text)]
        if let field { error["field"] = .string(field) }
        return .json(
            422,
            [
                "message": "Validation Failed", "errors": [.object(error)],
                "documentation_url": "https://docs.github.com/rest/webhooks/repos#create-a-repository-webhook",
            ])
    }
}
