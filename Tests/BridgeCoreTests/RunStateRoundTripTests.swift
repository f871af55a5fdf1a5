import Foundation
import Testing

@testable import BridgeCore

/// The store writes `RunState` with `RunStateJSON`, field by field, and reads it back with
/// `JSONDecoder`. A field the writer forgets is dropped on every write and comes back as its
/// default after a restart: no scripted run would notice if none of them sets it. These tests
/// build a state with every stored property set, checked by reflection, so adding a property
/// without setting it here fails loudly, and adding it without writing it fails the round trip.
@Suite("Run state round trip")
struct RunStateRoundTripTests {
    /// A state in which every optional is set, every collection holds two entries or more, every
    /// Boolean is true (false is what a forgotten one decodes to), and the strings need escaping.
    static func everyFieldSet() -> RunState {
        let key = RunKey(repository: "acme/wid\"gets", runID: 9_007_199_254, attempt: 3)
        var state = RunState(
            key: key,
            repository: Repository(
                fullName: "acme/wid\"gets", htmlURL: "https://github.com/acme/wid%22gets", defaultBranch: "main\u{0}"),
            at: 1_700_000_000.125)
        state.run = WorkflowRun(
            id: key.runID, runAttempt: 3, runNumber: 412, workflowID: 77, name: "CI 🚀", displayTitle: "Fix\t\"quotes\"",
            path: ".github/workflows/ci.yml", headBranch: "feature/ü\u{202E}", headSHA: "deadbeef", event: "push",
            status: .completed, conclusion: "failure", htmlURL: "https://github.com/acme/widgets/actions/runs/1",
            runStartedAt: 1_700_000_001.5, createdAt: 1_700_000_000.25, updatedAt: 1_700_000_300.75,
            pullRequests: [
                PullRequestReference(number: 7, htmlURL: "https://github.com/acme/widgets/pull/7"),
                PullRequestReference(number: 8, htmlURL: "https://github.com/acme/widgets/pull/8"),
            ], actor: "octo\u{200B}cat", triggeringActor: "hubot", commitTitle: "Fix 🐛 in \"parser\"",
            headRepository: "mal\"lory/rocket\u{202E}", headRepositoryID: 780_616_470)
        state.jobs = [
            11: JobRecord(
                id: 11, name: "build (linux, 6.0)", status: .completed, conclusion: "success", createdAt: 1_700_000_002,
                startedAt: 1_700_000_003.5, completedAt: 1_700_000_100.25, waitingEnvironment: "production",
                isCheckRun: true, htmlURL: "https://github.com/acme/widgets/actions/runs/1/job/11",
                failedStep: "Run tests 🧪", deploymentEnvironment: "production", labels: ["self-hosted", "arm64 \"m1\""]),
            12: JobRecord(
                id: 12, name: "deploy\n", status: .waiting, conclusion: "skipped", createdAt: 1_700_000_004,
                startedAt: 1_700_000_005, completedAt: 1_700_000_006, waitingEnvironment: "staging", isCheckRun: true,
                htmlURL: "https://github.com/acme/widgets/actions/runs/1/job/12", failedStep: "</script>",
                deploymentEnvironment: "staging\u{202E}", labels: ["linux", "x64\u{202E}"]),
        ]
        state.jobMetadata = JobMetadata(
            sourceJobID: 11, workflowName: "CI 🚀", headBranch: "feature/ü\u{202E}", headSHA: "deadbeef",
            sender: "dependabot[bot]")
        state.seed = RunSummary(
            key: RunKey(repository: key.repository, runID: 41, attempt: 1), workflow: "CI 🚀", branch: "main",
            conclusion: "success", finishedAt: 1_699_999_000.5,
            groups: [
                GroupSummary(name: "build", jobCount: 4, duration: 93.25),
                GroupSummary(name: "deploy", jobCount: 1, duration: 12),
            ])
        state.estimates = ["build": 93.25, "deploy \"prod\"": 12.5]
        state.historyResolved = true
        state.inherited = [
            InheritedGroup(name: "lint", orderKey: 3, jobCount: 1, succeeded: true),
            InheritedGroup(name: "test", orderKey: 5, jobCount: 2, succeeded: true),
        ]
        state.failedBefore = ["test (shard-2)", "lint \"quoted\" \u{202E}"]
        state.lastChangeAt = 1_700_000_300.875
        state.completion = RunCompletion(conclusion: "failure", recognizedAt: 1_700_000_301, source: .inferred)
        state.cardDecision = CardDecision(
            level: .steps, reason: "budget: 40 left for 12.5 runs", decidedAt: 1_700_000_000.5, remaining: 40,
            forecastRuns: 12.5)
        state.updatesSpent = 6
        state.actionNote = ActionNote(
            kind: .rerun, text: "Re-run failed: “Ünïcode” \u{202E}person\u{202C} has no access", failed: true,
            at: 1_700_000_302.25)
        var placement = CardPlacement(place: .preempted, since: 1_700_000_310.5, rank: .failing)
        placement.cardAt = 1_700_000_001.25
        placement.summaryAt = 1_700_000_310.5
        placement.preemptedAt = 1_700_000_310.5
        placement.preemptions = 1
        placement.restartedAt = 1_700_000_320.75
        state.placement = placement
        state.runnerWait = RunnerWait(
            jobID: 12, job: "deploy\n", since: 1_700_000_004, labels: ["self-hosted", "gpu ⚡"],
            noticedAt: 1_700_000_124.5)
        state.queuedAlertAt = 1_700_001_804.25
        return state
    }

    /// Paths of the stored properties in `value` that hold nothing: a nil optional, an empty or
    /// one-entry collection, a false Boolean. Walks nested structures, arrays and dictionaries.
    static func unsetProperties(of value: Any, path: String = "state") -> [String] {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first?.value else { return [path + " is nil"] }
            return unsetProperties(of: wrapped, path: path)
        case .collection, .set:
            let elements = mirror.children.map(\.value)
            let own = elements.count < 2 ? [path + " has fewer than two entries"] : []
            return own + elements.enumerated().flatMap { unsetProperties(of: $1, path: "\(path)[\($0)]") }
        case .dictionary:
            let entries = mirror.children.map(\.value)
            let own = entries.count < 2 ? [path + " has fewer than two entries"] : []
            return own
                + entries.flatMap { entry in
                    let pair = Array(Mirror(reflecting: entry).children)
                    return unsetProperties(of: pair[1].value, path: "\(path)[\(pair[0].value)]")
                }
        case .struct, .class:
            return mirror.children.flatMap { child in
                unsetProperties(of: child.value, path: path + "." + (child.label ?? "?"))
            }
        default:
            if let flag = value as? Bool, !flag { return [path + " is false"] }
            return []
        }
    }

    @Test("the fixture sets every stored property (add a new one here when RunState grows)")
    func fixtureIsExhaustive() {
        #expect(Self.unsetProperties(of: Self.everyFieldSet()) == [])
    }

    @Test("the reflection check notices an unset property, a short collection and a false flag")
    func reflectionCatchesGaps() {
        var state = Self.everyFieldSet()
        state.updatesSpent = nil
        state.inherited.removeLast()
        state.jobs[12]?.isCheckRun = false
        let gaps = Self.unsetProperties(of: state)
        #expect(gaps.contains("state.updatesSpent is nil"))
        #expect(gaps.contains("state.inherited has fewer than two entries"))
        #expect(gaps.contains("state.jobs[12].isCheckRun is false"))
    }

    @Test("the store's writer keeps every property: JSONDecoder reads back an equal state")
    func storeWriterRoundTrip() throws {
        let state = Self.everyFieldSet()
        let text = try #require(RunStateJSON.text(of: state))
        let decoded = try JSONDecoder().decode(RunState.self, from: Data(text.utf8))
        #expect(decoded == state, "\(text)")
    }

    @Test("the store's writer says what Foundation's encoder says about the same state")
    func storeWriterMatchesFoundation() throws {
        let state = Self.everyFieldSet()
        let text = try #require(RunStateJSON.text(of: state))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(try JSONValue(parsing: Data(text.utf8)) == JSONValue(parsing: encoder.encode(state)))
    }
}
