import BridgeCore

/// `POST /notifications` as PushWard accepts it (`PUSHWARD-MORE.md` §2 and §3): what the fake
/// checks before it records a notification. Lengths count Unicode scalars, as a JSON Schema
/// `maxLength` does, which is stricter than counting characters: a body within these fits either
/// reading.
public enum NotificationContract {
    public static let levels: Set<String> = ["passive", "active", "time-sensitive", "critical"]
    /// Members this validator knows; anything else is a 422 (PushWard's schema is closed).
    public static let members: Set<String> = [
        "title", "body", "subtitle", "level", "volume", "thread_id", "collapse_id", "source", "source_display_name",
        "url", "media", "icon_url", "metadata", "actions", "activity_slug", "push", "target",
    ]

    /// What is wrong with `body`, each as a violation; empty when PushWard would take it.
    public static func violations(_ body: JSONValue) -> [ContractViolation] {
        guard let object = body.objectValue else {
            return [ContractViolation(field: "(body)", rule: "must be an object")]
        }
        var found: [ContractViolation] = []
        func fail(_ field: String, _ rule: String) { found.append(ContractViolation(field: field, rule: rule)) }
        func text(_ field: String, _ range: ClosedRange<Int>, required: Bool = false) {
            if let rule = textProblem(object[field], range, required: required) { fail(field, rule) }
        }
        for key in object.keys.sorted() where !members.contains(key) { fail(key, "unknown member") }
        text("title", 1...256, required: true)
        text("body", 1...4_096, required: true)
        text("subtitle", 0...256)
        text("thread_id", 0...128)
        text("collapse_id", 0...64)
        text("source", 0...128)
        text("source_display_name", 0...256)
        text("activity_slug", 1...128)
        if let level = object["level"] {
            if !(level.stringValue.map(levels.contains) ?? false) { fail("level", "must be one of \(levels.sorted())") }
        }
        if let url = object["url"] {
            if let problem = urlProblem(url.stringValue) { fail("url", problem) }
        }
        if let push = object["push"], push.boolValue == nil { fail("push", "must be a boolean") }
        if let target = object["target"] {
            if let problem = targetProblem(target) { fail("target", problem) }
        }
        if let actions = object["actions"] {
            for (field, rule) in actionProblems(actions) { fail(field, rule) }
        }
        return found
    }

    /// What is wrong with a string member of `range` Unicode scalars; nil when it is right or absent
    /// and not `required`.
    static func textProblem(_ value: JSONValue?, _ range: ClosedRange<Int>, required: Bool) -> String? {
        guard let value else { return required ? "required" : nil }
        guard let string = value.stringValue else { return "must be a string" }
        return range.contains(string.unicodeScalars.count)
            ? nil : "must be \(range.lowerBound)–\(range.upperBound) characters"
    }

    /// The HTTP methods an action may name (`NotificationAction.method`).
    public static let actionMethods: Set<String> = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]
    static let actionMembers: Set<String> = [
        "id", "title", "icon", "url", "method", "headers", "body", "foreground", "destructive",
        "authentication_required", "text_input", "text_input_placeholder", "text_input_button_title",
    ]

    /// `actions`: at most 10 objects, ids unique; each member as `NotificationAction` states it.
    /// A custom-scheme url takes no method, headers or body; a foreground http url must be https.
    static func actionProblems(_ value: JSONValue) -> [(String, String)] {
        guard let list = value.arrayValue else { return [("actions", "must be an array")] }
        var found: [(String, String)] = []
        if list.count > 10 { found.append(("actions", "must hold at most 10 actions")) }
        var ids: Set<String> = []
        for (index, element) in list.enumerated() {
            let field = "actions[\(index)]"
            guard let action = element.objectValue else {
                found.append((field, "must be an object"))
                continue
            }
            func text(_ key: String, _ range: ClosedRange<Int>, required: Bool = false) {
                if let rule = textProblem(action[key], range, required: required) {
                    found.append((field + "." + key, rule))
                }
            }
            for key in action.keys.sorted() where !actionMembers.contains(key) {
                found.append((field + "." + key, "unknown member"))
            }
            text("id", 1...64, required: true)
            text("title", 1...64, required: true)
            text("icon", 0...64)
            text("body", 0...1_024)
            text("text_input_placeholder", 0...64)
            text("text_input_button_title", 0...64)
            if let id = action["id"]?.stringValue, !ids.insert(id).inserted {
                found.append((field + ".id", "duplicate id \(id)"))
            }
            for key in ["foreground", "destructive", "authentication_required", "text_input"] {
                if let flag = action[key], flag.boolValue == nil {
                    found.append((field + "." + key, "must be a boolean"))
                }
            }
            if let method = action["method"], !(method.stringValue.map(actionMethods.contains) ?? false) {
                found.append((field + ".method", "must be one of \(actionMethods.sorted())"))
            }
            if let headers = action["headers"] {
                if let map = headers.objectValue, map.values.allSatisfy({ $0.stringValue != nil }) {
                    let size = map.reduce(0) { $0 + $1.key.utf8.count + ($1.value.stringValue?.utf8.count ?? 0) }
                    if size > 1_024 { found.append((field + ".headers", "must total at most 1 KB")) }
                } else {
                    found.append((field + ".headers", "must be an object of strings"))
                }
            }
            if let url = action["url"] {
                if let problem = urlProblem(url.stringValue) {
                    found.append((field + ".url", problem))
                } else if let string = url.stringValue {
                    let scheme = string.prefix { $0 != ":" }.lowercased()
                    let web = scheme == "http" || scheme == "https"
                    if !web, ["method", "headers", "body"].contains(where: { action[$0] != nil }) {
                        found.append((field + ".url", "a custom scheme takes no method, headers or body"))
                    }
                    if web, action["foreground"]?.boolValue == true, scheme != "https" {
                        found.append((field + ".foreground", "opening a page needs https"))
                    }
                }
            }
        }
        return found
    }

    /// `url` takes any scheme but javascript, data, file and vbscript; http(s) needs a host.
    static func urlProblem(_ value: String?) -> String? {
        guard let value else { return "must be a string" }
        if value.unicodeScalars.count > 2_048 { return "must be at most 2048 characters" }
        guard let colon = value.firstIndex(of: ":") else { return "must have a scheme" }
        let scheme = value[..<colon].lowercased()
        if ["javascript", "data", "file", "vbscript"].contains(scheme) { return "scheme \(scheme) is not allowed" }
        if scheme == "http" || scheme == "https" {
            return ContractValidator.urlProblem(value, httpsOnly: false)
        }
        return nil
    }

    /// `{groups ≤ 20, tags ≤ 20, members ≤ 100}`, each a list of non-empty strings.
    static func targetProblem(_ value: JSONValue) -> String? {
        guard let object = value.objectValue else { return "must be an object" }
        let limits = ["groups": 20, "tags": 20, "members": 100]
        for (key, list) in object {
            guard let limit = limits[key] else { return "unknown member \(key)" }
            guard let items = list.arrayValue, items.count <= limit,
                items.allSatisfy({ ($0.stringValue ?? "").isEmpty == false })
            else { return "\(key) must be at most \(limit) names" }
        }
        return nil
    }
}
