/// How the PushWard server applies `POST /activities` and `PATCH /activities/{slug}` to what it
/// stores (`spec/CONTRACT.md`, "Merge-patch semantics" and the steps template rules).
///
/// The bridge uses it to track what the server holds after each acknowledged request; the tests'
/// fake server uses it to behave like the real one. Both assume the request is valid: checking
/// the contract is `ContractValidator`'s job, and a server answers an invalid request with 4xx
/// without storing anything, so here malformed members are simply ignored.
public enum PushWardActivityModel {
    /// The longest `duration` PushWard accepts: 5 years of 365.25 days, in seconds.
    public static let maximumDurationSeconds = 157_788_000

    /// The content arrays whose length must equal `total_steps`, dropped from storage when a
    /// patch changes `total_steps` without re-sending them.
    public static let perStepArrayKeys = ["step_rows", "step_labels", "step_weights", "step_colors"]

    /// Applies a `POST /activities` body (an upsert).
    ///
    /// A new activity starts `ended` with empty content. A re-POST refreshes name, priority and
    /// TTLs and keeps state and content. A POST body is a full description, not a merge-patch, so
    /// a TTL it leaves out goes back to the server default (nil); a missing or non-integer name or
    /// priority keeps the existing value (0 and "" for a new activity).
    public static func create(_ body: JSONValue, existing: StoredActivity?) -> StoredActivity {
        var activity = existing ?? StoredActivity(name: "", priority: 0)
        if let name = body["name"]?.stringValue { activity.name = name }
        if let priority = body["priority"]?.intValue { activity.priority = priority }
        activity.endedTTL = body["ended_ttl"]?.intValue
        activity.staleTTL = body["stale_ttl"]?.intValue
        return activity
    }

    /// Applies a `PATCH /activities/{slug}` body received at `now`.
    ///
    /// - `state`, `priority`, `ended_ttl`, `stale_ttl` replace (a `null` TTL returns to the default).
    /// - `content` is merge-patched into the stored content (`null` clears a member; `content: null`
    ///   clears all of it).
    /// - `content.duration` is not stored: it sets `start_date = now` and `end_date = now +
    ///   duration` in whole Unix seconds. A patch that carries `end_date` too, a `null` one
    ///   included, has its duration ignored ("if both are provided, `end_date` wins"); a
    ///   `start_date` the patch carries (value or `null`) is the patch's, not the duration's. An
    ///   invalid duration is dropped without effect.
    /// - When the patch changes `total_steps` to an integer, stored per-step arrays the patch does
    ///   not send and whose length no longer matches are dropped.
    /// - When the resulting state is `ended`, `live_progress`, `start_date` and `end_date` go.
    public static func applyPatch(_ body: JSONValue, to stored: StoredActivity, at now: UnixTime) -> StoredActivity {
        var activity = stored
        if let state = body["state"]?.stringValue { activity.state = state }
        if let priority = body["priority"]?.intValue { activity.priority = priority }
        if let endedTTL = body["ended_ttl"] { activity.endedTTL = endedTTL.intValue }
        if let staleTTL = body["stale_ttl"] { activity.staleTTL = staleTTL.intValue }

        if let patch = body["content"] {
            activity.content = patchedContent(stored.content, with: patch, at: now)
        }
        if activity.state == "ended" {
            for key in ["live_progress", "start_date", "end_date"] {
                activity.content.removeValue(forKey: key)
            }
        }
        return activity
    }

    /// Parses a `duration` value into seconds: a positive integer number, or a string of
    /// `<digits><unit>` parts with units `h`, `m`, `s` in that order, each at most once (`"90s"`,
    /// `"90m"`, `"1h30m"`, `"2h"`).
    ///
    /// Returns nil for anything PushWard would reject: non-positive, over
    /// `maximumDurationSeconds`, fractional, or malformed (`""`, `"90"`, `"1m1h"`, `"1.5h"`).
    public static func parseDuration(_ value: JSONValue) -> Int? {
        let seconds: Int?
        switch value {
        case .number: seconds = value.intValue
        case .string(let text): seconds = parseDurationString(text)
        default: seconds = nil
        }
        guard let seconds, seconds > 0, seconds <= maximumDurationSeconds else { return nil }
        return seconds
    }

    // MARK: - Private

    private static func patchedContent(
        _ stored: [String: JSONValue], with patch: JSONValue, at now: UnixTime
    ) -> [String: JSONValue] {
        guard patch.isNull || patch.objectValue != nil else {
            // The server answers 400/422 to a non-object content; nothing is stored.
            return stored
        }
        var content = MergePatch.apply(patch, to: .object(stored)).objectValue ?? [:]
        let patchMembers = patch.objectValue ?? [:]

        content.removeValue(forKey: "duration")
        // A present `end_date` wins over `duration`, `null` included: the merge above already
        // applied it, and the duration sets nothing.
        if patchMembers["end_date"] == nil, let durationValue = patchMembers["duration"],
            let duration = parseDuration(durationValue)
        {
            // `now` is a clock reading; a non-finite one cannot come from a clock, so 0 is moot.
            let start = Int(exactly: now.rounded(.down)) ?? 0
            if patchMembers["start_date"] == nil { content["start_date"] = .number(Double(start)) }
            content["end_date"] = .number(Double(start + duration))
        }

        let storedTotal = stored["total_steps"]
        if let newTotalValue = patchMembers["total_steps"], newTotalValue != storedTotal,
            let newTotal = content["total_steps"]?.intValue
        {
            for key in perStepArrayKeys where patchMembers[key] == nil {
                if let array = content[key]?.arrayValue, array.count != newTotal {
                    content.removeValue(forKey: key)
                }
            }
        }
        return content
    }

    private static func parseDurationString(_ text: String) -> Int? {
        let units: [(Character, Int)] = [("h", 3600), ("m", 60), ("s", 1)]
        var nextUnitIndex = 0
        var digits = ""
        var total = 0
        var sawPart = false
        for character in text {
            if character.isASCII, character.isWholeNumber {
                // 12 digits of hours stay far below Int.max; longer is malformed anyway.
                guard digits.count < 12 else { return nil }
                digits.append(character)
                continue
            }
            guard !digits.isEmpty, let amount = Int(digits),
                let unitIndex = units[nextUnitIndex...].firstIndex(where: { $0.0 == character })
            else { return nil }
            total += amount * units[unitIndex].1
            nextUnitIndex = unitIndex + 1
            digits = ""
            sawPart = true
        }
        guard digits.isEmpty, sawPart else { return nil }
        return total
    }
}
