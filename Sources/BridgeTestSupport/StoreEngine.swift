import Testing

/// The engine a store test runs on. `.onEachEngine` runs every test of a suite once per engine,
/// with `StoreEngine.current` set to the engine of that run, so a suite that opens its database
/// through the current engine tests SQLite and PostgreSQL with one body.
public enum StoreEngine: String, CaseIterable, Sendable {
    case sqlite
    case postgresql

    /// The engine of the run in progress; SQLite outside `.onEachEngine`.
    @TaskLocal public static var current = StoreEngine.sqlite
}

/// Runs each test case once per `StoreEngine`, SQLite first. A failure's comments name the
/// engine it happened on, since both runs report at the same source lines.
public struct EachStoreEngineTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Per test case, so each engine's run builds its own suite instance (and database).
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        for engine in StoreEngine.allCases {
            let naming: IssueHandlingTrait = .compactMapIssues { issue in
                var issue = issue
                issue.comments.append("on \(engine.rawValue)")
                return issue
            }
            try await StoreEngine.$current.withValue(engine) {
                try await naming.provideScope(for: test, testCase: testCase, performing: function)
            }
        }
    }
}

extension Trait where Self == EachStoreEngineTrait {
    /// Runs each test once on SQLite and once on PostgreSQL (see `EachStoreEngineTrait`).
    public static var onEachEngine: Self { EachStoreEngineTrait() }
}
