import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// What a run lookup feeds the core: GitHub's REST objects as the deliveries GitHub would have
/// sent, decodable by the webhook decoder, with ids of their content; and the engine's side of it.
@Suite("run lookups")
struct APIObservationTests {
    static let script = RunScript(start: 1_800_000_000)

    static func apiRun(status: String, conclusion: String?) -> JSONValue {
        let event = script.run(status == "completed" ? "completed" : "in_progress", at: 30, conclusion: conclusion)
        let body = try? JSONValue(parsing: PayloadEncoder.encode(event).body)
        guard case .object(var run)? = body?["workflow_run"] else { return .null }
        run["repository"] = body?["repository"]
        return .object(run)
    }

    static func apiJobs() -> JSONValue {
        let job = script.job(
            100, "lint", "completed", createdAt: 0, startedAt: 5, completedAt: 20, conclusion: "failure")
        let body = try? JSONValue(parsing: PayloadEncoder.encode(job).body)
        return ["total_count": 1, "jobs": [body?["workflow_job"] ?? .null]]
    }

    @Test("one workflow_job per job, then the workflow_run, each decoding as its webhook does")
    func shapes() throws {
        let observations = try #require(
            APIObservation.observations(
                run: Self.apiRun(status: "completed", conclusion: "failure"), jobs: Self.apiJobs()))
        #expect(observations.map(\.event) == ["workflow_job", "workflow_run"])
        for observation in observations {
            #expect(observation.id.hasPrefix("api-") && observation.id.count == 36)
            let decoded = try WebhookDecoder.decode(event: observation.event, body: observation.body, contentType: nil)
            switch decoded {
            case .workflowRun(let delivery):
                #expect(delivery.action == "completed" && delivery.run.conclusion == "failure")
            case .workflowJob(let delivery):
                #expect(delivery.action == "completed" && delivery.job.conclusion == "failure")
            default:
                Issue.record("\(decoded)")
            }
        }
        // The same answer twice: the same ids (a duplicate); a changed one: new ids.
        let again = APIObservation.observations(
            run: Self.apiRun(status: "completed", conclusion: "failure"), jobs: Self.apiJobs())
        #expect(again?.map(\.id) == observations.map(\.id))
        let running = APIObservation.observations(
            run: Self.apiRun(status: "in_progress", conclusion: nil), jobs: Self.apiJobs())
        #expect(running?.last?.id != observations.last?.id)
        #expect((try? JSONValue(parsing: running?.last?.body ?? Data()))?["action"] == "in_progress")
    }

    @Test("a run object without its repository or status is not guessed at")
    func unreadable() {
        #expect(APIObservation.observations(run: ["id": 1, "status": "completed"], jobs: [:]) == nil)
        #expect(
            APIObservation.observations(run: ["id": 1, "repository": ["full_name": "acme/widgets"]], jobs: [:]) == nil)
    }

    @Test("quiet runs, quietest first; the API's word restarts the quiet period and the grace")
    func engineSide() throws {
        var settings = ActivitySettings()
        settings.completionGrace = 100
        var engine = BridgeEngine(settings: settings)
        let first = RunScript(runID: 1, runNumber: 1, start: 1_000, firstJobID: 10)
        let second = RunScript(runID: 2, runNumber: 2, start: 1_000, firstJobID: 20)
        _ = engine.receive(first.run("requested", at: 0), at: 1_000)
        _ = engine.receive(second.run("requested", at: 0), at: 1_010)
        _ = engine.receive(
            first.job(10, "lint", "completed", createdAt: 0, startedAt: 1, completedAt: 5, conclusion: "success"),
            at: 1_020)
        let keys = [first, second].map { RunKey(repository: $0.repository.fullName, runID: $0.runID, attempt: 1) }
        #expect(engine.quietRuns(since: 1_015, limit: 10) == [keys[1]])
        #expect(engine.quietRuns(since: 1_100, limit: 10) == [keys[1], keys[0]])
        #expect(engine.quietRuns(since: 1_100, limit: 1) == [keys[1]])
        // Run 1's only job finished at 1020: the guess is due at 1120, unless the API speaks of it.
        engine.heardFromAPI(keys[0], at: 1_110)
        engine.advance(to: 1_125)
        #expect(engine.runs[keys[0]]?.completion == nil)
        #expect(engine.quietRuns(since: 1_100, limit: 10) == [keys[1]])
        engine.advance(to: 1_211)
        #expect(engine.runs[keys[0]]?.completion?.source == .inferred)
    }
}
