/// Which links the card may carry: those PushWard accepts for `url`, `secondary_url` and the
/// actions' `url` (`spec/CONTRACT.md`): http(s), a host, at most 2048 characters, and no
/// whitespace or control characters.
///
/// The links are built from payload fields the decoder takes as they are (`html_url`, the
/// repository's full name, the head SHA), so a broken or hostile delivery can make one the server
/// refuses with 422 — and a refused PATCH is a card that stops updating. Such a link is left off
/// the card instead; the rest of the frame still goes out.
enum LinkURL {
    static let maximumCharacters = 2048

    static func isAcceptable(_ text: String) -> Bool {
        guard text.count <= maximumCharacters else { return false }
        let forbidden = text.unicodeScalars.contains {
            $0.properties.isWhitespace || $0.properties.generalCategory == .control
        }
        if forbidden { return false }
        let lowered = text.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }) else { return false }
        let authority = text.dropFirst(scheme.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        return !host.isEmpty && !host.hasPrefix(":")
    }
}
