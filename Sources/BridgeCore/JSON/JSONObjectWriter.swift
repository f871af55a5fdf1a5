/// One JSON object being written by hand into a `JSONByteBuffer` (`RunStateJSON`,
/// `ActivitySessionJSON`): a comma before every member but the first; `nil` leaves a member out,
/// as synthesized `Encodable` does.
struct JSONObjectWriter {
    var empty = true

    mutating func key(_ name: String, _ out: inout JSONByteBuffer) {
        if !empty { out.append(JSONByteBuffer.comma) }
        empty = false
        out.appendString(name)
        out.append(JSONByteBuffer.colon)
    }

    mutating func string(_ name: String, _ value: String?, _ out: inout JSONByteBuffer) {
        guard let value else { return }
        key(name, &out)
        out.appendString(value)
    }

    mutating func integer(_ name: String, _ value: Int?, _ out: inout JSONByteBuffer) {
        guard let value else { return }
        key(name, &out)
        out.appendInteger(value)
    }

    mutating func bool(_ name: String, _ value: Bool, _ out: inout JSONByteBuffer) {
        key(name, &out)
        if value { out.appendASCII("true") } else { out.appendASCII("false") }
    }

    /// False for a number JSON cannot hold.
    mutating func number(_ name: String, _ value: Double?, _ out: inout JSONByteBuffer) -> Bool {
        guard let value else { return true }
        guard value.isFinite else { return false }
        key(name, &out)
        out.appendFiniteDouble(value)
        return true
    }
}
