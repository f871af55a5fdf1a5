/// Which field of a card's content PushWard refused, read from its `422` answer, so the next frame
/// goes without that field's value instead of repeating it: a body is refused whole, and every
/// frame after a refusal is a full frame carrying the same fields, so one value PushWard will not
/// take (a label the bridge measured wrong, a colour, a link) would otherwise freeze the card on
/// its last accepted frame until the run ends.
///
/// PushWard names the field in the problem's `errors[].location` (`body.content.step_labels[2]`)
/// when it gives one, and otherwise at the start of `detail` (`progress must be between 0.0 and
/// 1.0`; the tests' fake says `content.step_labels[2]: must be at most 32 runes`). Only a field the
/// refused body's `content` carried, and one the card can go without, is dropped: the fields that
/// make the card what it is (`template`, `progress`, `current_step`, `total_steps`) are not, and a
/// refusal of one of them stays a refusal (`ActivitySession.rejectedBody`).
public enum RefusedField {
    /// Fields a card cannot go without.
    public static let essential: Set<String> = ["template", "progress", "current_step", "total_steps"]

    /// The content field to drop after `problem` answered `body`; nil when the answer names none
    /// the body carried, or names an essential one.
    public static func of(_ problem: PushWardProblem, body: JSONValue) -> String? {
        guard problem.status == 422, let content = body["content"]?.objectValue else { return nil }
        let candidates = (problem.fieldLocations ?? []) + (problem.detail.map { [$0] } ?? [])
        for text in candidates {
            guard let field = topLevelField(text), content[field] != nil, !essential.contains(field) else { continue }
            return field
        }
        return nil
    }

    /// `step_labels` from `body.content.step_labels[2]`, `content.state: …` or `state must be …`:
    /// the first name after the `body.` and `content.` prefixes, up to `[`, `.`, `:` or a space.
    static func topLevelField(_ text: String) -> String? {
        var rest = Substring(text)
        for prefix in ["body.", "content."] where rest.hasPrefix(prefix) { rest = rest.dropFirst(prefix.count) }
        let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return name.isEmpty ? nil : String(name)
    }
}
