import Testing

@testable import BridgeCore

/// What a failure alert quotes of a failed job's annotations, on annotations shaped as GitHub's
/// `GET …/check-runs/{id}/annotations` lists them for an Actions job.
@Suite("annotation quote")
struct AnnotationQuoteTests {
    /// GitHub's closing line, on every failed step (`path` `.github`, no line of use).
    static let closing: JSONValue = [
        "path": ".github", "start_line": 1, "end_line": 1, "annotation_level": "failure",
        "title": "", "message": "Process completed with exit code 1.", "raw_details": "",
    ]

    static func annotation(
        _ message: String, level: String = "failure", path: String = "Sources/App/Main.swift", line: Int = 42
    ) -> JSONValue {
        [
            "path": .string(path), "start_line": .number(Double(line)), "end_line": .number(Double(line)),
            "annotation_level": .string(level), "title": "", "message": .string(message), "raw_details": "",
        ]
    }

    @Test("the first failure that is not GitHub's closing line, as path:line: message")
    func firstRealError() {
        let list = [
            Self.closing, Self.annotation("deprecated API", level: "warning"),
            Self.annotation("error: cannot find 'x' in scope"), Self.annotation("second error"),
        ]
        #expect(AnnotationQuote.first(of: list) == "Sources/App/Main.swift:42: error: cannot find 'x' in scope")
    }

    @Test("nothing worth quoting: only the closing line, only warnings and notices, or none")
    func nothing() {
        #expect(AnnotationQuote.first(of: [Self.closing]) == nil)
        #expect(AnnotationQuote.first(of: [Self.annotation("slow", level: "warning")]) == nil)
        #expect(AnnotationQuote.first(of: [Self.annotation("fyi", level: "notice")]) == nil)
        #expect(AnnotationQuote.first(of: []) == nil)
        #expect(AnnotationQuote.first(of: [Self.annotation("   ")]) == nil)
    }

    @Test("a multi-line message quotes its first line; a workflow-level error names no file")
    func shape() {
        #expect(
            AnnotationQuote.first(of: [Self.annotation("expected 2\n  got 3\n", path: "test.py", line: 7)])
                == "test.py:7: expected 2")
        #expect(
            AnnotationQuote.first(of: [Self.annotation("The job was not started", path: ".github")])
                == "The job was not started")
        #expect(AnnotationQuote.first(of: [Self.annotation("boom", path: "a.c", line: 0)]) == "a.c: boom")
    }

    @Test("a hostile message is made plain and cut between graphemes at the limit, in runes")
    func hostile() throws {
        let hostile = Self.annotation("\u{202E}evil\u{0007}\u{2066} " + String(repeating: "🇫🇷", count: 400), path: "x")
        let quote = try #require(AnnotationQuote.first(of: [hostile]))
        #expect(!quote.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{2066}" || $0 == "\u{0007}" })
        #expect(quote.unicodeScalars.count <= AnnotationQuote.limit)
        // No half flag: every regional indicator is paired.
        #expect(quote.unicodeScalars.filter { (0x1F1E6...0x1F1FF).contains($0.value) }.count % 2 == 0)
    }
}
