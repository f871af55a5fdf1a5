import BridgeTestSupport

@testable import BridgeCore

/// Run states built the way the engine builds them (deliveries applied to a fresh state), for the
/// tests of the engine's feature types, which take runs as inputs rather than deliveries.
enum EngineFeatureFixtures {
    static let start: UnixTime = 1_700_000_000

    static func key(_ script: RunScript) -> RunKey {
        RunKey(repository: script.repository.fullName, runID: script.runID, attempt: script.attempt)
    }

    /// `script`'s run after `events`, each taken as heard at its own time.
    static func state(_ script: RunScript, _ events: [WebhookEvent]) -> RunState {
        var state = RunState(key: key(script), repository: script.repository, at: script.start)
        for event in events {
            switch event {
            case .workflowRun(let delivery):
                if state.apply(delivery.run) { state.lastChangeAt = delivery.run.updatedAt ?? script.start }
                if delivery.run.status == .completed {
                    state.completion = RunCompletion(
                        conclusion: delivery.run.conclusion ?? "success", recognizedAt: state.lastChangeAt,
                        source: .runEvent)
                }
            case .workflowJob(let delivery):
                if state.apply(delivery) {
                    state.lastChangeAt = delivery.job.completedAt ?? delivery.job.startedAt ?? script.start
                }
            default:
                break
            }
        }
        return state
    }

    /// A run whose jobs all finished (`conclusion` the last one's) without its `completed` delivery.
    static func jobsFinished(_ script: RunScript, conclusion: String = "success") -> RunState {
        state(
            script,
            script.deliveries(
                waves: [[RunScript.Job("build", duration: 20, conclusion: conclusion)]], complete: false))
    }

    /// A run still going: its one job in progress.
    static func running(_ script: RunScript) -> RunState {
        state(script, Array(script.deliveries(waves: [[RunScript.Job("build", duration: 20)]]).prefix(4)))
    }

    /// A run that finished with `conclusion`, its `completed` delivery heard.
    static func finished(_ script: RunScript, conclusion: String = "success") -> RunState {
        state(
            script,
            script.deliveries(
                waves: [[RunScript.Job("build", duration: 20, conclusion: conclusion)]], conclusion: conclusion))
    }
}
