import BridgeCore
import Foundation

/// `POST /widgets` and `PATCH /widgets/{slug}` as PushWard accepts them, with the `progress`
/// template (`PUSHWARD-MORE.md` §5, `progress-widget.txt`): what the fake checks before it stores
/// a widget. Lengths count Unicode scalars.
public enum WidgetContract {
    static let postMembers: Set<String> = ["slug", "name", "content", "push_throttle", "stale_after"]
    static let patchMembers: Set<String> = ["content", "name", "push_throttle", "stale_after"]
    static let contentMembers: Set<String> = [
        "template", "value", "label", "subtitle", "icon", "unit", "accent_color", "background_color", "text_color",
        "stat_rows", "trend", "start_date", "end_date", "subtitle_timer", "tap_action", "url_action",
        "secondary_url_action",
    ]

    /// Violations of a `POST /widgets` body.
    public static func postViolations(_ body: JSONValue) -> [ContractViolation] {
        guard let object = body.objectValue else {
            return [ContractViolation(field: "(body)", rule: "must be an object")]
        }
        var found: [ContractViolation] = []
        for key in object.keys.sorted() where !postMembers.contains(key) {
            found.append(ContractViolation(field: key, rule: "unknown member"))
        }
        if !WidgetSettings.isValidSlug(object["slug"]?.stringValue ?? "") {
            found.append(ContractViolation(field: "slug", rule: "must match ^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$"))
        }
        if let rule = NotificationContract.textProblem(object["name"], 1...256, required: true) {
            found.append(ContractViolation(field: "name", rule: rule))
        }
        found += settingsViolations(object)
        if let content = object["content"]?.objectValue {
            found += contentViolations(content).map { ContractViolation(field: "content." + $0.field, rule: $0.rule) }
        } else {
            found.append(ContractViolation(field: "content", rule: "required, an object with template"))
        }
        return found
    }

    /// Violations of a `PATCH /widgets/{slug}` body, given what the widget holds; the merged
    /// content must be valid as a whole.
    public static func patchViolations(_ body: JSONValue, stored: [String: JSONValue]) -> [ContractViolation] {
        guard let object = body.objectValue else {
            return [ContractViolation(field: "(body)", rule: "must be an object")]
        }
        var found: [ContractViolation] = []
        for key in object.keys.sorted() where !patchMembers.contains(key) {
            found.append(ContractViolation(field: key, rule: "unknown member"))
        }
        guard let patch = object["content"] else {
            return found + [ContractViolation(field: "content", rule: "required")]
        }
        // `UpdateWidgetRequest.content` is a whole `WidgetContent`, whose `template` is required;
        // the sources disagree whether the server keeps the stored one, so a patch repeats it.
        if patch["template"] == nil {
            found.append(ContractViolation(field: "content.template", rule: "required in every PATCH"))
        }
        if let name = object["name"], let rule = NotificationContract.textProblem(name, 1...256, required: true) {
            found.append(ContractViolation(field: "name", rule: rule))
        }
        found += settingsViolations(object)
        let merged = MergePatch.apply(patch, to: .object(stored)).objectValue ?? [:]
        return found + contentViolations(merged).map { ContractViolation(field: "content." + $0.field, rule: $0.rule) }
    }

    static func settingsViolations(_ object: [String: JSONValue]) -> [ContractViolation] {
        var found: [ContractViolation] = []
        if let throttle = object["push_throttle"], !throttle.isNull,
            !(throttle.intValue.map { (1...3_600).contains($0) } ?? false)
        {
            found.append(ContractViolation(field: "push_throttle", rule: "must be 1–3600 seconds"))
        }
        if let stale = object["stale_after"], !stale.isNull,
            !(stale.intValue.map { WidgetSettings.staleAfterRange.contains($0) } ?? false)
        {
            found.append(ContractViolation(field: "stale_after", rule: "must be 60–604800 seconds"))
        }
        return found
    }

    /// Violations of a whole `progress` content, at `now` (the dates' 366-day bound).
    public static func contentViolations(
        _ content: [String: JSONValue], at now: UnixTime = Date().timeIntervalSince1970
    )
        -> [ContractViolation]
    {
        var found: [ContractViolation] = []
        func fail(_ field: String, _ rule: String) { found.append(ContractViolation(field: field, rule: rule)) }
        for key in content.keys.sorted() where !contentMembers.contains(key) { fail(key, "unknown content field") }
        if content["template"] != "progress" { fail("template", "must be \"progress\"") }
        let start = date(content["start_date"], "start_date", now: now, fail: fail)
        let end = date(content["end_date"], "end_date", now: now, fail: fail)
        if let start, let end, start >= end { fail("end_date", "must be after start_date") }
        if (content["start_date"] == nil) != (content["end_date"] == nil) {
            fail("end_date", "start_date and end_date go together")
        }
        if let value = content["value"] {
            if !(value.doubleValue.map { $0.isFinite && (0...1).contains($0) } ?? false) {
                fail("value", "must be 0.0–1.0")
            }
        } else if start == nil || end == nil {
            fail("value", "required unless both dates are set")
        }
        for (key, limit) in [("label", 256), ("subtitle", 256), ("icon", 128), ("unit", 32)] {
            if let rule = NotificationContract.textProblem(content[key], 0...limit, required: false) { fail(key, rule) }
        }
        for key in ["accent_color", "background_color", "text_color"] {
            if let color = content[key], !(color.stringValue.map(ContractValidator.isColor) ?? false) {
                fail(key, "must be a named colour, #RRGGBB or #RRGGBBAA")
            }
        }
        if let trend = content["trend"], !["up", "down", "flat"].contains(trend.stringValue ?? "") {
            fail("trend", "must be up, down or flat")
        }
        if let rows = content["stat_rows"] {
            if let list = rows.arrayValue, list.count <= 6 {
                for (index, row) in list.enumerated() {
                    let field = "stat_rows[\(index)]"
                    guard let object = row.objectValue else {
                        fail(field, "must be an object")
                        continue
                    }
                    for key in object.keys.sorted() where !["label", "value", "unit", "timer"].contains(key) {
                        fail(field + "." + key, "unknown member")
                    }
                    for (key, limit, required) in [("label", 32, true), ("value", 32, true), ("unit", 16, false)] {
                        if let rule = NotificationContract.textProblem(
                            object[key], (required ? 1 : 0)...limit, required: required)
                        {
                            fail(field + "." + key, rule)
                        }
                    }
                }
            } else {
                fail("stat_rows", "must be at most 6 objects")
            }
        }
        for key in ["tap_action", "url_action", "secondary_url_action"] {
            guard let action = content[key] else { continue }
            guard let url = action["url"]?.stringValue, ContractValidator.urlProblem(url, httpsOnly: false) == nil
            else {
                fail(key + ".url", "must be an http(s) URL with a host")
                continue
            }
        }
        return found
    }

    /// An RFC 3339 date after 2000-01-01 and at most 366 days after `now`; nil (after a violation)
    /// when it is not one.
    static func date(
        _ value: JSONValue?, _ field: String, now: UnixTime, fail: (String, String) -> Void
    ) -> UnixTime? {
        guard let value else { return nil }
        guard let text = value.stringValue, let time = GitHubTimestamp.parse(text) else {
            fail(field, "must be an RFC 3339 string")
            return nil
        }
        if time <= 946_684_800 { fail(field, "must be after 2000-01-01") }
        if time > now + 366 * 86_400 { fail(field, "must be at most 366 days ahead") }
        return time
    }
}
