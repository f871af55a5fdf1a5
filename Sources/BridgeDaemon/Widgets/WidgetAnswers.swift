import BridgeCore
import BridgeStore
import Foundation

/// Home-screen widgets (`widgets`) on the service's side: what each answer to a widget request did,
/// applied in the turn that records it, and what needs a person said. Widget requests are not rows
/// of `pushes` (which count Live Activity updates); each widget keeps what it spent and what
/// PushWard last said in its own row, written with the turn.
enum WidgetAnswers {
    static func record(_ planned: PlannedWidgetRequest, answer: PushWardAnswer, in turn: inout ServiceTurn) {
        let now = turn.now
        let wasPaused = turn.engine.widgetBudget.pausedUntil.map { now < $0 } ?? false
        let effect = turn.engine.handleWidget(answer, for: planned, at: now)
        let status: String
        switch answer {
        case .success(let code, _): status = String(code)
        case .problem(let problem): status = String(problem.status)
        case .noAnswer: status = "none"
        }
        turn.metrics.add("widget_requests_total", labels: ["kind": planned.kind.rawValue, "status": status])
        var metadata: [String: JSONValue] = [
            "widget.slug": .string(planned.request.slug), "widget.kind": .string(planned.kind.rawValue),
        ]
        if let run = planned.run {
            metadata["github.repository"] = .string(run.repository)
            metadata["run.id"] = .number(Double(run.runID))
        }
        switch effect {
        case .acknowledged:
            turn.log.debug("PushWard took a widget update", metadata)
        case .recreating:
            turn.log.warning("the widget was deleted on PushWard; creating it again", metadata)
        case .quotaExhausted(let until):
            metadata["push.resume_at"] = .string(GitHubTimestamp.format(until))
            if !wasPaused {
                turn.log.error(
                    "PushWard's widget updates are spent for the month: widgets wait for the reset; cards go on",
                    metadata)
            }
        case .willRetry(let at):
            metadata["push.retry_at"] = .number(at)
            turn.log.info("PushWard did not take a widget update; it is tried again", metadata)
        case .refused(let detail):
            metadata["push.problem"] = .string(detail)
            turn.log.error(
                "PushWard refused the key for widgets: it needs the widgets: write permission; widgets wait an hour",
                metadata)
        case .rejected(let detail):
            metadata["push.problem"] = .string(detail)
            turn.log.error(
                "PushWard rejected a widget update; it is not sent again (a bug in the bridge)", metadata)
        }
        turn.wakesDispatcher = true
    }
}
