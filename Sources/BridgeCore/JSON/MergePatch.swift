/// RFC 7396 JSON merge-patch: how PushWard applies a `PATCH /activities/{slug}` body, and how the
/// bridge computes the smallest body that moves the server from what it holds to what we want.
///
/// The rules that matter (and bite): a member left out of a patch keeps its value, a member sent as
/// `null` is removed, and arrays are never merged, only replaced whole.
public enum MergePatch {
    /// Applies `patch` to `target` (RFC 7396 §2).
    ///
    /// An object patch edits an object target member by member (a non-object target is first
    /// replaced by `{}`); `null` members remove, object members recurse, anything else replaces.
    /// A non-object patch replaces the target whole, so `apply(.null, to: x)` is `.null`.
    public static func apply(_ patch: JSONValue, to target: JSONValue) -> JSONValue {
        guard case .object(let patchMembers) = patch else { return patch }
        var result = target.objectValue ?? [:]
        for (key, value) in patchMembers {
            if value.isNull {
                result.removeValue(forKey: key)
            } else {
                // A missing member behaves as a non-object target: an object patch builds it from {}.
                result[key] = apply(value, to: result[key] ?? .null)
            }
        }
        return .object(result)
    }

    /// The merge-patch that turns `old` into `new`, or nil when they are already equal (so the
    /// caller has nothing to send).
    ///
    /// For two objects the patch is minimal and recursive: changed or added members, and an
    /// explicit `null` for each removed member. Anything else (arrays, scalars, a change of type,
    /// a `null` `new`) is replaced whole, because merge-patch cannot express a partial edit of it.
    ///
    /// Round trip: `apply(diff(a, b)!, to: a) == b` whenever `a != b` and `b` has no `null` member
    /// inside an object — merge-patch cannot store a `null` member, it can only remove one.
    /// Numbers compare with `==`, so a NaN never equals itself and always produces a patch.
    public static func diff(from old: JSONValue, to new: JSONValue) -> JSONValue? {
        if old == new { return nil }
        guard case .object(let oldMembers) = old, case .object(let newMembers) = new else {
            // `new` replaces `old`; a patch of `null` means "remove", which is what `new == null` is.
            return new
        }
        var patch: [String: JSONValue] = [:]
        for key in oldMembers.keys where newMembers[key] == nil {
            patch[key] = .null
        }
        for (key, newValue) in newMembers {
            if let oldValue = oldMembers[key] {
                if let memberPatch = diff(from: oldValue, to: newValue) {
                    patch[key] = memberPatch
                }
            } else {
                patch[key] = newValue
            }
        }
        return .object(patch)
    }
}
