import Testing

@testable import WebhookServer

extension HTTPServerTests {
    @Suite("ListenAddress")
    struct ListenAddressParsing {
        @Test(
            "Accepted forms parse, and print back canonically",
            arguments: [
                ("127.0.0.1:8080", "127.0.0.1:8080"),
                ("0.0.0.0:8080", "0.0.0.0:8080"),
                ("[::1]:8080", "[::1]:8080"),
                ("[::]:0", "[::]:0"),
                ("localhost:8080", "127.0.0.1:8080"),
                ("LOCALHOST:1", "127.0.0.1:1"),
                ("10.1.2.3:65535", "10.1.2.3:65535"),
                ("[fe80::1]:443", "[fe80::1]:443"),
            ])
        func accepted(text: String, canonical: String) throws {
            let address = try ListenAddress(parsing: text)
            #expect(address.description == canonical)
            #expect(try ListenAddress(parsing: address.description) == address)
        }

        @Test("Wildcards and families")
        func families() throws {
            #expect(try ListenAddress(parsing: "[::]:0").isIPv6Unspecified)
            #expect(try !ListenAddress(parsing: "[::1]:0").isIPv6Unspecified)
            #expect(try ListenAddress(parsing: "[::1]:0").isIPv6)
            #expect(
                try ListenAddress(parsing: "localhost:8080") == ListenAddress(host: .ipv4(127, 0, 0, 1), port: 8080))
        }

        @Test(
            "Rejected forms name the text",
            arguments: [
                "", "8080", ":8080", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:80a",
                "256.0.0.1:80", "1.2.3:80", "01.2.3.4:80", "::1:8080", "[::1]", "[::1]8080", "[::1:8080",
                "[nope]:80", "example.com:80", "[fe80::1%eth0]:80", "127.0.0.1:+80",
            ])
        func rejected(text: String) {
            do {
                _ = try ListenAddress(parsing: text)
                Issue.record("\"\(text)\" parsed")
            } catch {
                guard case .invalidListenAddress(let named, _) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(named == text)
                #expect(error.description.contains("\"\(text)\""))
            }
        }
    }
}
