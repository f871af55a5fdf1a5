import BridgeCore
import Foundation

/// Checks a request against PushWard's contract (`spec/CONTRACT.md`, "PushWard REST API" and the
/// "Steps template rules" table), so every request a test produces is held to what the real server
/// would accept — a request the fake answers with 2xx must not be one the server answers with 422.
///
/// It is stricter than the server in one way on purpose: unknown body and content keys are
/// violations, because the bridge should send only what it means. An empty result means the
/// request is valid. Violations name the field as a path in the request body (`priority`,
/// `content.step_rows[2]`, `content.url_action.url`); `validateContent` names them relative to the
/// content (`step_rows[2]`).
public enum ContractValidator {
    /// The colour names PushWard accepts besides `#RRGGBB`/`#RRGGBBAA`.
    public static let namedColors: Set<String> = [
        "red", "orange", "yellow", "green", "blue", "purple", "pink", "indigo", "teal", "cyan", "mint", "brown",
    ]

    /// Every content key the steps template knows. `duration` is one even though the server never
    /// stores it: it is sent in patches and turned into `start_date`/`end_date`.
    public static let contentKeys: Set<String> = [
        "template", "progress", "total_steps", "current_step", "step_rows", "step_labels", "step_weights",
        "step_colors", "state", "icon", "subtitle", "accent_color", "background_color", "text_color", "url",
        "secondary_url", "url_action", "secondary_url_action", "tap_action", "live_progress", "duration",
        "start_date", "end_date", "image_url", "image_shape", "image_thumbhash", "compact_label",
    ]

    /// Every content key the generic template knows (`PUSHWARD-MORE.md` §6, `generic-template.txt`).
    public static let genericContentKeys: Set<String> = [
        "template", "progress", "state", "icon", "subtitle", "accent_color", "background_color", "text_color", "url",
        "secondary_url", "url_action", "secondary_url_action", "tap_action", "live_progress", "duration",
        "start_date", "end_date", "remaining_time", "image_url", "image_shape", "image_thumbhash", "compact_label",
    ]

    /// The largest TTL PushWard accepts (30 days), in seconds.
    public static let maximumTTL = 2_592_000

    /// `dismissal_ttl`: 0 (off the Lock Screen at once) to 4 hours, the iOS maximum.
    static let dismissalRange = 0...14_400

    /// The sounds `UpdateActivityRequest.sound` names.
    static let sounds: Set<String> = [
        "default", "chime", "alert", "success", "warning", "bell", "ding", "buzz", "notification",
    ]

    /// Violations of `request` against the contract, given what the server holds for its slug
    /// (`stored`, nil when the slug is unknown).
    ///
    /// A PATCH is also applied (with `PushWardActivityModel.applyPatch`) and the resulting content,
    /// when there is any, must satisfy `validateContent`: the server validates what it would store.
    /// `now` is the time the server receives it; nil skips the rule that depends on the clock
    /// (`end_date` within 5 years), and `duration` is then anchored at time 0.
    public static func validate(
        _ request: PushWardRequest, stored: StoredActivity?, at now: UnixTime? = nil
    ) -> [ContractViolation] {
        switch request.method {
        case .post: validatePost(request)
        case .patch: validatePatch(request, stored: stored, at: now)
        case .delete: request.body.isNull ? [] : [ContractViolation(field: "body", rule: "a DELETE has no body")]
        }
    }

    /// Violations of a whole stored content document of the steps or the generic template (not a
    /// patch: `null` members are type violations here). `now`, when given, also bounds `end_date`
    /// to 5 years ahead.
    public static func validateContent(
        _ content: [String: JSONValue], at now: UnixTime? = nil
    ) -> [ContractViolation] {
        var check = Checker()
        let generic = content["template"] == "generic"
        for key in content.keys.sorted() where !(generic ? genericContentKeys : contentKeys).contains(key) {
            check.fail(key, "unknown content field")
        }

        if let template = content["template"] {
            if template != "steps" && !generic { check.fail("template", "must be \"steps\" or \"generic\"") }
        } else {
            check.fail("template", "required")
        }
        if let progress = content["progress"] {
            if let value = progress.doubleValue {
                if !value.isFinite || value < 0 || value > 1 { check.fail("progress", "must be finite, 0.0–1.0") }
            } else {
                check.fail("progress", "must be a number")
            }
        } else {
            check.fail("progress", "required")
        }
        if generic {
            check.integer(content["remaining_time"], "remaining_time", in: 0...Int.max)
        } else {
            let total = check.integer(content["total_steps"], "total_steps", in: 1...64, required: true)
            check.integer(content["current_step"], "current_step", in: 0...(total ?? Int.max), required: true)
            checkPerStepArrays(content, total: total, into: &check)
        }

        check.string(content["state"], "state", maxCharacters: 256)
        check.string(content["subtitle"], "subtitle", maxCharacters: 256)
        check.string(content["icon"], "icon", maxCharacters: 128)
        check.string(content["compact_label"], "compact_label", maxCharacters: 4)
        for key in ["accent_color", "background_color", "text_color"] {
            if let text = check.string(content[key], key, maxCharacters: nil), !isColor(text) {
                check.fail(key, "must be a named colour, #RRGGBB or #RRGGBBAA")
            }
        }
        for key in ["url", "secondary_url"] {
            check.url(content[key], key, httpsOnly: false)
        }
        for key in ["url_action", "secondary_url_action", "tap_action"] {
            checkAction(content[key], field: key, into: &check)
        }

        checkLiveWindow(content, at: now, into: &check)

        check.url(content["image_url"], "image_url", httpsOnly: true)
        if let image = content["image_url"]?.stringValue, urlProblem(image, httpsOnly: true) == nil,
            !hasValidHost(image)
        {
            check.fail("image_url", "must name a valid host")
        }
        if let shape = check.string(content["image_shape"], "image_shape", maxCharacters: nil),
            !["poster", "square", "circle"].contains(shape)
        {
            check.fail("image_shape", "must be poster, square or circle")
        }
        if let hash = check.string(content["image_thumbhash"], "image_thumbhash", maxCharacters: 64),
            !isPaddedBase64(hash)
        {
            check.fail("image_thumbhash", "must be padded standard-alphabet base64")
        }
        return check.violations
    }

    // MARK: - Requests

    private static func validatePost(_ request: PushWardRequest) -> [ContractViolation] {
        var check = Checker()
        guard let body = request.body.objectValue else {
            check.fail("body", "must be a JSON object")
            return check.violations
        }
        let allowed: Set<String> = ["slug", "name", "priority", "ended_ttl", "stale_ttl", "dismissal_ttl", "target"]
        for key in body.keys.sorted() where !allowed.contains(key) {
            check.fail(key, "unknown field for POST /activities")
        }
        if let target = body["target"], let problem = NotificationContract.targetProblem(target) {
            check.fail("target", problem)
        }
        if let slug = check.string(body["slug"], "slug", maxCharacters: nil, required: true) {
            if slug.isEmpty {
                check.fail("slug", "must not be empty")
            } else if slug != request.slug {
                check.fail("slug", "must equal the request's slug \"\(request.slug)\"")
            } else if !isSlug(slug) {
                check.fail("slug", "must match ^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$")
            }
        }
        check.string(body["name"], "name", maxCharacters: 256, required: true)
        check.integer(body["priority"], "priority", in: 0...10, required: true)
        for key in ["ended_ttl", "stale_ttl"] {
            check.integer(body[key], key, in: 1...maximumTTL)
        }
        check.integer(body["dismissal_ttl"], "dismissal_ttl", in: dismissalRange)
        return check.violations
    }

    private static func validatePatch(
        _ request: PushWardRequest, stored: StoredActivity?, at now: UnixTime?
    ) -> [ContractViolation] {
        var check = Checker()
        guard let stored else {
            check.fail("slug", "activity.not_found")
            return check.violations
        }
        guard let body = request.body.objectValue else {
            check.fail("body", "must be a JSON object")
            return check.violations
        }
        let allowed: Set<String> = [
            "state", "content", "priority", "ended_ttl", "stale_ttl", "dismissal_ttl", "sound", "target",
        ]
        for key in body.keys.sorted() where !allowed.contains(key) {
            check.fail(key, "unknown field for PATCH /activities/{slug}")
        }
        if let state = check.string(body["state"], "state", maxCharacters: nil), state != "ongoing",
            state != "ended"
        {
            check.fail("state", "must be ongoing or ended")
        }
        check.integer(body["priority"], "priority", in: 0...10)
        for key in ["ended_ttl", "stale_ttl"] where body[key]?.isNull != true {
            // `null` is a merge-patch "back to the default"; anything else must be a valid TTL.
            check.integer(body[key], key, in: 1...maximumTTL)
        }
        if body["dismissal_ttl"]?.isNull != true {
            check.integer(body["dismissal_ttl"], "dismissal_ttl", in: dismissalRange)
        }
        if let sound = check.string(body["sound"], "sound", maxCharacters: nil), !sounds.contains(sound) {
            check.fail("sound", "must be one of \(sounds.sorted())")
        }

        if let content = body["content"] {
            if let members = content.objectValue {
                checkContentPatch(members, stored: stored, into: &check)
            } else if !content.isNull {
                check.fail("content", "must be an object (or null to clear it)")
            }
        }

        let result = PushWardActivityModel.applyPatch(request.body, to: stored, at: now ?? 0)
        if !result.content.isEmpty {
            for violation in validateContent(result.content, at: now) {
                check.fail("content." + violation.field, violation.rule)
            }
        }
        return check.violations
    }

    /// Rules on the patch itself rather than on its result: keys the result cannot show (an
    /// unknown key sent as `null`, an invalid `duration` the server never stores) and arrays whose
    /// length disagrees with the `total_steps` in force.
    private static func checkContentPatch(
        _ patch: [String: JSONValue], stored: StoredActivity, into check: inout Checker
    ) {
        // Either template's key may be sent (a `null` clears what the other template left); what
        // the result may hold is `validateContent`'s to say.
        for key in patch.keys.sorted() where !contentKeys.contains(key) && !genericContentKeys.contains(key) {
            check.fail("content." + key, "unknown content field")
        }
        if let duration = patch["duration"], !duration.isNull, PushWardActivityModel.parseDuration(duration) == nil {
            check.fail("content.duration", durationRule)
        }
        // PushWard lets `end_date` win over `duration`; whether a `null` one does, and what a
        // `start_date` beside a duration means, the documents leave open. A body whose meaning rests
        // on that corner is refused here, whatever the server would make of it.
        if patch["duration"] != nil, patch["start_date"] != nil || patch["end_date"] != nil {
            check.fail("content.duration", "must not be sent with start_date or end_date (a value or null)")
        }
        let expected = patch["total_steps"].map(\.intValue) ?? stored.content["total_steps"]?.intValue
        guard let expected else { return }
        for key in PushWardActivityModel.perStepArrayKeys {
            if let array = patch[key]?.arrayValue, array.count != expected {
                check.fail("content." + key, lengthRule(count: array.count, total: expected))
            }
        }
    }

    // MARK: - Content parts

    private static func checkPerStepArrays(_ content: [String: JSONValue], total: Int?, into check: inout Checker) {
        for key in PushWardActivityModel.perStepArrayKeys {
            guard let value = content[key] else { continue }
            guard let elements = value.arrayValue else {
                check.fail(key, "must be an array")
                continue
            }
            if let total, elements.count != total {
                check.fail(key, lengthRule(count: elements.count, total: total))
            }
            for (index, element) in elements.enumerated() {
                let field = "\(key)[\(index)]"
                switch key {
                case "step_rows":
                    check.integer(element, field, in: 1...10, required: true)
                case "step_labels":
                    check.string(element, field, maxCharacters: 32, required: true)
                case "step_weights":
                    if let weight = element.doubleValue {
                        if !weight.isFinite || weight <= 0 { check.fail(field, "must be a finite number > 0") }
                    } else {
                        check.fail(field, "must be a number")
                    }
                default:
                    if let color = check.string(element, field, maxCharacters: nil, required: true), !color.isEmpty,
                        !isColor(color)
                    {
                        check.fail(field, "must be \"\", a named colour, #RRGGBB or #RRGGBBAA")
                    }
                }
            }
        }
    }

    private static func checkAction(_ value: JSONValue?, field: String, into check: inout Checker) {
        guard let value else { return }
        guard let members = value.objectValue else {
            check.fail(field, "must be an object {url, title?, icon?, foreground?, method?}")
            return
        }
        let allowed: Set<String> = ["url", "title", "icon", "foreground", "method", "headers", "body"]
        for key in members.keys.sorted() where !allowed.contains(key) {
            check.fail(field + "." + key, "unknown action field")
        }
        // A request the phone makes itself: only to a web URL, each part at most 1 KB.
        let web = members["url"]?.stringValue.map {
            $0.lowercased().hasPrefix("http://") || $0.lowercased().hasPrefix("https://")
        }
        if web != true, ["method", "headers", "body"].contains(where: { members[$0] != nil }) {
            check.fail(field + ".url", "method, headers and body need an http(s) URL")
        }
        if let headers = members["headers"] {
            if let map = headers.objectValue, map.values.allSatisfy({ $0.stringValue != nil }) {
                let size = map.reduce(0) { $0 + $1.key.utf8.count + ($1.value.stringValue?.utf8.count ?? 0) }
                if size > 1_024 { check.fail(field + ".headers", "must total at most 1 KB") }
            } else {
                check.fail(field + ".headers", "must be an object of strings")
            }
        }
        if let body = check.string(members["body"], field + ".body", maxCharacters: nil), body.utf8.count > 1_024 {
            check.fail(field + ".body", "must be at most 1 KB")
        }
        check.url(members["url"], field + ".url", httpsOnly: false, required: true)
        check.string(members["title"], field + ".title", maxCharacters: 64)
        check.string(members["icon"], field + ".icon", maxCharacters: 64)
        if let foreground = members["foreground"], foreground.boolValue == nil {
            check.fail(field + ".foreground", "must be a boolean")
        }
        if let method = check.string(members["method"], field + ".method", maxCharacters: nil),
            !NotificationContract.actionMethods.contains(method)
        {
            check.fail(field + ".method", "must be one of \(NotificationContract.actionMethods.sorted())")
        }
    }

    private static func checkLiveWindow(_ content: [String: JSONValue], at now: UnixTime?, into check: inout Checker) {
        if let live = content["live_progress"] {
            if let flag = live.boolValue {
                if flag, content["end_date"] == nil, content["duration"] == nil {
                    // PushWard's own words for it (a 422).
                    check.fail("live_progress", "live_progress requires end_date or duration")
                }
            } else {
                check.fail("live_progress", "must be a boolean")
            }
        }
        if let duration = content["duration"], PushWardActivityModel.parseDuration(duration) == nil {
            check.fail("duration", durationRule)
        }
        let start = check.integer(content["start_date"], "start_date", in: 0...Int.max)
        let end = check.integer(content["end_date"], "end_date", in: 0...Int.max)
        if let start, let end, start >= end {
            check.fail("end_date", "must be after start_date")
        }
        if let end, let now, Double(end) > now + Double(PushWardActivityModel.maximumDurationSeconds) {
            check.fail("end_date", "must be within 5 years")
        }
    }

    // MARK: - Values

    private static let durationRule =
        "must be 1–157,788,000 seconds or a string like \"90s\", \"90m\", \"1h30m\""

    private static func lengthRule(count: Int, total: Int) -> String {
        "length \(count) must equal total_steps (\(total))"
    }

    /// `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$`, the slug of `CreateActivityRequest`.
    static func isSlug(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func alphanumeric(_ byte: UInt8) -> Bool {
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
        }
        guard let first = bytes.first, alphanumeric(first), bytes.count <= 128 else { return false }
        return bytes.dropFirst().allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// Padded standard-alphabet base64 (`A–Z a–z 0–9 + /`, `=` to a multiple of four), the form
    /// `image_thumbhash` is documented in.
    static func isPaddedBase64(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count % 4 == 0 else { return false }
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2 else { return false }
        return bytes.dropLast(padding).allSatisfy { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
        }
    }

    /// Whether an http(s) URL's host is a DNS name (letters, digits and hyphens in dot-separated
    /// labels of 1–63, none starting or ending with a hyphen), an IPv4 address or a bracketed IPv6
    /// one: the device must be able to look it up.
    static func hasValidHost(_ url: String) -> Bool {
        guard let scheme = url.range(of: "://") else { return false }
        let authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var host = Substring(authority.split(separator: "@", omittingEmptySubsequences: false).last ?? "")
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let inside = host[host.index(after: host.startIndex)..<close]
            return !inside.isEmpty && inside.allSatisfy { $0 == ":" || $0 == "." || $0.isHexDigit }
        }
        if let colon = host.lastIndex(of: ":") {
            let port = host[host.index(after: colon)...]
            guard !port.isEmpty, port.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
            host = host[..<colon]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        return host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            let bytes = Array(label.utf8)
            return !bytes.isEmpty && bytes.count <= 63 && bytes.first != UInt8(ascii: "-")
                && bytes.last != UInt8(ascii: "-")
                && bytes.allSatisfy { byte in
                    (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
                        || byte == UInt8(ascii: "-")
                }
        }
    }

    /// A named colour, `#RRGGBB` or `#RRGGBBAA` (hex digits in either case).
    static func isColor(_ text: String) -> Bool {
        if namedColors.contains(text) { return true }
        let scalars = Array(text.unicodeScalars)
        guard scalars.first == "#", scalars.count == 7 || scalars.count == 9 else { return false }
        return scalars.dropFirst().allSatisfy { $0.isASCII && $0.properties.isASCIIHexDigit }
    }

    /// Why `text` is not an acceptable URL, or nil when it is: http(s) (https only for images),
    /// ≤ 2048 characters, no whitespace or control characters, a host, and for `httpsOnly` no
    /// user:password part (the device downloads images, so credentials would leak to it).
    static func urlProblem(_ text: String, httpsOnly: Bool) -> String? {
        if text.unicodeScalars.count > 2048 { return "must be at most 2048 characters" }
        let forbidden = text.unicodeScalars.contains {
            $0.properties.isWhitespace || $0.properties.generalCategory == .control
        }
        if forbidden { return "must not contain whitespace or control characters" }
        let lowered = text.lowercased()
        let schemes = httpsOnly ? ["https://"] : ["http://", "https://"]
        guard let scheme = schemes.first(where: { lowered.hasPrefix($0) }) else {
            return httpsOnly ? "must be an https URL" : "must be an http(s) URL"
        }
        let afterScheme = text.dropFirst(scheme.count)
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if httpsOnly, authority.contains("@") { return "must not carry a user name or password" }
        let host = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        if host.isEmpty || host.hasPrefix(":") { return "must have a host" }
        return nil
    }
}

/// Collects violations, and does the type-and-range checks every rule shares.
private struct Checker {
    var violations: [ContractViolation] = []

    /// Records a violation once: the patch-level and result-level checks can find the same one.
    mutating func fail(_ field: String, _ rule: String) {
        let violation = ContractViolation(field: field, rule: rule)
        if !violations.contains(violation) { violations.append(violation) }
    }

    /// The integer in `value` when it is one in `range`; nil (with a violation) otherwise, and nil
    /// without one when the optional field is absent.
    @discardableResult
    mutating func integer(
        _ value: JSONValue?, _ field: String, in range: ClosedRange<Int>, required: Bool = false
    ) -> Int? {
        guard let value else {
            if required { fail(field, "required") }
            return nil
        }
        guard let integer = value.intValue else {
            fail(field, "must be an integer")
            return nil
        }
        guard range.contains(integer) else {
            let rule =
                range.upperBound == Int.max
                ? "must be ≥ \(range.lowerBound)" : "must be \(range.lowerBound)–\(range.upperBound)"
            fail(field, rule)
            return nil
        }
        return integer
    }

    /// The string in `value`; nil (with a violation) when it is not a string or is longer than
    /// `maxCharacters` runes (Unicode scalars, as PushWard and its OpenAPI `maxLength`s count,
    /// not Swift's grapheme clusters), and nil without one when the optional field is absent.
    @discardableResult
    mutating func string(
        _ value: JSONValue?, _ field: String, maxCharacters: Int?, required: Bool = false
    ) -> String? {
        guard let value else {
            if required { fail(field, "required") }
            return nil
        }
        guard let text = value.stringValue else {
            fail(field, "must be a string")
            return nil
        }
        if let maxCharacters, text.unicodeScalars.count > maxCharacters {
            fail(field, "must be at most \(maxCharacters) characters")
            return nil
        }
        return text
    }

    mutating func url(_ value: JSONValue?, _ field: String, httpsOnly: Bool, required: Bool = false) {
        guard let text = string(value, field, maxCharacters: nil, required: required) else { return }
        if let problem = ContractValidator.urlProblem(text, httpsOnly: httpsOnly) {
            fail(field, problem)
        }
    }
}
