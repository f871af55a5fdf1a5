import BridgeCore
import BridgeStore

/// Retention on the service's side: the pass under way (what it removed so far, and where the
/// step-history scan stands), run one batch per table at a time (`BridgeDatabase.pruneRetention`,
/// whose batches are bounded transactions of their own), and its one log line when it is done.
struct RetentionRunner: Sendable {
    private var pass = RetentionPass()
    let settings: RetentionSettings
    /// How long payloads are kept.
    let payloadRetention: Int

    init(settings: RetentionSettings, payloadRetention: Int) {
        self.settings = settings
        self.payloadRetention = payloadRetention
    }

    /// One batch per table; whether anything is left. A failure is logged and the pass tried again
    /// at the next period.
    mutating func batch(_ database: BridgeDatabase, log: Logger, at now: UnixTime) -> Bool {
        do {
            let more = try database.pruneRetention(
                &pass, settings: settings, payloadRetention: payloadRetention, at: now)
            if !more { finish(log: log) }
            return more
        } catch {
            log.warning("retention pruning failed; it runs again later", ["error": .string("\(error)")])
            finish(log: log)
            return false
        }
    }

    /// Logs what the pass removed (at info when it removed anything) and starts counting afresh.
    private mutating func finish(log: Logger) {
        let metadata: [String: JSONValue] = [
            "retention.payloads": .number(Double(pass.payloads)),
            "retention.deliveries": .number(Double(pass.deliveries)),
            "retention.runs": .number(Double(pass.runs)),
            "retention.activities": .number(Double(pass.activities)),
            "retention.step_history_runs": .number(Double(pass.stepHistoryRuns)),
            "retention.recovery_requests": .number(Double(pass.recoveryRequests)),
            "retention.action_tokens": .number(Double(pass.actionTokens)),
            "retention.actions": .number(Double(pass.actions)),
            "retention.pages_released": .number(Double(pass.pagesReleased)),
        ]
        if pass.removedAnything {
            log.info("retention pass done", metadata)
        } else {
            log.debug("retention pass done: nothing past retention", metadata)
        }
        pass.startNext()
    }
}
