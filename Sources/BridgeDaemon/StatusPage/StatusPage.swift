import BridgeCore
import BridgeStore
import Foundation

/// The admin listener's `/`: one self-contained HTML document (inline CSS, no scripts, fonts or
/// other requests, so it works on an air-gapped host and behind the token) listing the runs still
/// going, then the recent ones, each with its card drawn as phones show it, a link to the run on
/// GitHub, and the history of deliveries and PushWard requests behind it.
///
/// Pure: a function of the snapshot, so tests can render it without a daemon.
public enum StatusPage {
    /// Seconds between reloads while a run is active; a finished page stays still.
    public static let refreshSeconds = 5
    /// Nothing but the inline stylesheet and style attributes may load or run.
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
    /// Rows of each history table drawn per run; the API has the rest.
    static let tableRows = 40

    /// `standing` is the daemon's `budgetStanding()`: passed in rather than read here so the page
    /// stays a function of values. Nil (tests of other parts) leaves the budget out of the page.
    public static func render(
        _ snapshot: StatusSnapshot, standing: (budget: PushBudget?, levelInForce: Fidelity?)? = nil,
        version: String = Daemon.version
    ) -> String {
        let active = snapshot.active
        let recent = snapshot.recent
        var html = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        // Defence in depth behind the escaping: the page has no scripts, images or forms, so a
        // policy that allows none costs nothing and stops one that got in anyway.
        html += "<meta http-equiv=\"Content-Security-Policy\" content=\"\(contentSecurityPolicy)\">"
        if !active.isEmpty { html += "<meta http-equiv=\"refresh\" content=\"\(refreshSeconds)\">" }
        html += "<title>\(active.isEmpty ? "" : "(\(active.count)) ")pushward-bridge</title>"
        html += "<style>\(stylesheet)</style></head><body>"
        html += "<header class=\"top\"><div class=\"brand\"><span class=\"logo\" aria-hidden=\"true\"></span>"
        html += "pushward-bridge</div><div class=\"summary\">"
        if !active.isEmpty { html += "<span class=\"pulse\" aria-hidden=\"true\"></span>" }
        html += "<span id=\"counts\">\(active.count) active · \(recent.count) recent</span>"
        html += "<span class=\"dim\"> · \(Markup.escaped(clock(snapshot.takenAt))) UTC"
        html += active.isEmpty ? "" : " · refreshing every \(refreshSeconds) s"
        html += "</span>"
        if let standing { html += budgetSummary(standing) }
        html += "</div></header><main>"
        for notice in snapshot.notices {
            html += "<section class=\"notice\" role=\"status\"><p>\(Markup.escaped(notice))</p></section>"
        }
        if let standing { html += budgetSection(snapshot, budget: standing.budget) }
        if let leadership = snapshot.leadership { html += leadershipSection(leadership, now: snapshot.takenAt) }
        if let recovery = snapshot.recovery { html += recoverySection(recovery) }
        if !snapshot.widgets.isEmpty {
            html += "<section id=\"widgets\"><h2>Widgets</h2>"
            html += snapshot.widgets.map { WidgetPanel.render($0, now: snapshot.takenAt) }.joined()
            html += "</section>"
        }
        if !snapshot.actions.isEmpty { html += actionsSection(snapshot.actions) }
        if snapshot.runs.isEmpty {
            html += "<section class=\"empty\"><h2>No runs yet</h2><p>Point a GitHub webhook (events: Workflow runs"
            html += " and Workflow jobs) at this bridge's <code>/webhook</code>; runs show up here as they"
            html += " arrive.</p></section>"
        }
        if !active.isEmpty {
            html += "<section id=\"active\"><h2>Active <span class=\"count\">\(active.count)</span></h2>"
            html += active.map { article($0, now: snapshot.takenAt) }.joined()
            html += "</section>"
        }
        if !recent.isEmpty {
            html += "<section id=\"recent\"><h2>Recent <span class=\"count\">\(recent.count)</span></h2>"
            html += recent.map { article($0, now: snapshot.takenAt) }.joined()
            html += "</section>"
        }
        html += "</main><footer>pushward-bridge \(Markup.escaped(version)) · JSON: <a href=\"/api/runs\">/api/runs</a>"
        html += " · <a href=\"/metrics\">/metrics</a></footer></body></html>\n"
        return html
    }

    // MARK: One run

    static func article(_ run: StatusSnapshot.Run, now: UnixTime) -> String {
        let key = run.key
        let anchor = "run-\(key.runID)-\(key.attempt)"
        var html = "<article class=\"run\(run.isActive ? " active" : "")\" id=\"\(anchor)\""
        html += " data-run-id=\"\(key.runID)\" data-attempt=\"\(key.attempt)\""
        html += " data-status=\"\(Markup.escaped(run.status))\">"
        html += "<div class=\"cards\">" + cards(run, anchor: anchor, now: now) + "</div>"
        html += "<div class=\"details\"><div class=\"title\"><h3>"
        html += "<span class=\"repo\">\(Markup.escaped(key.repository))</span>"
        html += "<span class=\"sep\">/</span>\(Markup.escaped(run.workflow ?? "workflow"))"
        if let number = run.runNumber { html += " <span class=\"number\">#\(number)</span>" }
        html += "</h3>" + badge(run) + "</div><dl class=\"meta\">"
        html += "<div><dt>Branch</dt><dd><code>\(Markup.escaped(run.branch ?? "–"))</code></dd></div>"
        if let fork = run.fork {
            // The fork's author chose the branch's name: say whose branch it is, beside it.
            html += "<div class=\"fork\"><dt>From</dt><dd><code>\(Markup.escaped(fork))</code></dd></div>"
        }
        if let (wait, state) = run.runnerWait {
            // Job name and labels come from the workflow file: escaped like every name here.
            let summary = wait.summary(in: state) { GitHubTimestamp.format($0) }
            html += "<div class=\"runner-wait\"><dt>Runner</dt><dd>\(Markup.escaped(summary))</dd></div>"
        }
        html += "<div><dt>Attempt</dt><dd>\(key.attempt)</dd></div>"
        html += "<div><dt>Run id</dt><dd>\(key.runID)</dd></div>"
        html += "<div><dt>Card</dt><dd><code>\(Markup.escaped(run.slug))</code>"
        html +=
            run.ownsActivity
            ? " <span class=\"dim\">(\(Markup.escaped(phaseText(run.ownerPhase))))</span>"
            : " <span class=\"dim\">(passed on)</span>"
        if let target = run.target {
            html += " <span class=\"dim\">→ \(Markup.escaped(target.description))</span>"
        }
        html +=
            "</dd></div><div><dt>Updated</dt><dd title=\"\(Markup.escaped(GitHubTimestamp.format(run.updatedAt)))\">"
        html += "\(Markup.escaped(ago(run.updatedAt, now: now)))</dd></div>"
        html += "<div><dt>Updates</dt><dd class=\"updates\">\(run.updatesSpent ?? 0)</dd></div></dl>"
        if let placement = run.placement {
            let place = placement.place.rawValue
            html += "<p class=\"placement\" data-place=\"\(Markup.escaped(place))\"><span class=\"tag"
            html += " \(placement.place == .card ? "neutral" : "bad")\">\(Markup.escaped(place))</span> "
            let line = placement.summaryLine(formatTime: { Markup.escaped(GitHubTimestamp.format($0)) })
            html += "<span class=\"dim\">\(line)</span></p>"
        }
        if let decision = run.cardDecision {
            let level = decision.level?.rawValue ?? "no card"
            html += "<p class=\"decision\" data-level=\"\(Markup.escaped(level))\"><span class=\"tag"
            html += " \(decision.level == nil ? "bad" : "neutral")\">\(Markup.escaped(level))</span> "
            html += "<span class=\"dim\">\(Markup.escaped(decision.reason))</span></p>"
        }
        html += "<div class=\"links\">"
        html += "<a class=\"github\" href=\"\(Markup.href(run.gitHubURL))\">View run on GitHub ↗</a>"
        let content = run.shown?.content ?? run.desired?.content
        if let secondary = content?["secondary_url_action"], let url = secondary["url"]?.stringValue {
            let title = secondary["title"]?.stringValue ?? "Commit"
            html += "<a href=\"\(Markup.href(url))\">\(Markup.escaped(title)) ↗</a>"
        }
        html += "<a class=\"json\" href=\"/api/runs/\(key.runID)\">JSON</a></div>"
        if let problem = run.lastProblem {
            html += "<div class=\"problem\" role=\"alert\"><strong>Last PushWard problem</strong>"
            if let at = run.lastProblemAt { html += " <span class=\"dim\">\(Markup.escaped(ago(at, now: now)))</span>" }
            html += "<div>\(Markup.escaped(problem))</div></div>"
        }
        if !run.alerts.isEmpty {
            html += "<div class=\"alerts\">"
            for alert in run.alerts {
                html +=
                    "<p class=\"alert\" data-reason=\"\(alert.reason.rawValue)\" data-state=\"\(alert.state.rawValue)\">"
                html += "\(Markup.escaped(AlertSummary.sentence(alert)))</p>"
            }
            html += "</div>"
        }
        let open = run.isActive ? " open" : ""
        html += "<details class=\"history\"\(open)><summary>PushWard requests <span class=\"count\">"
        html += "\(run.requests.count)</span></summary>" + requestTable(run.requests) + "</details>"
        html += "<details class=\"history\"\(open)><summary>Deliveries <span class=\"count\">"
        html += "\(run.deliveries.count)</span></summary>" + deliveryTable(run.deliveries) + "</details>"
        return html + "</div></article>"
    }

    /// The card phones show and, when the core wants something else on it, that too.
    static func cards(_ run: StatusSnapshot.Run, anchor: String, now: UnixTime) -> String {
        var html = ""
        if let shown = run.shown {
            html += CardSVG.render(
                shown.layout, options: .init(id: anchor + "-shown", now: now, buttons: buttons(shown.content)))
        } else {
            html += CardSVG.placeholder(
                run.ownsActivity ? "Nothing on the phones yet" : "This run never drew its card",
                options: .init(id: anchor + "-shown"))
        }
        html += "<div class=\"caption\">\(run.shown == nil ? "" : "On the phones")"
        if let shown = run.shown, shown.isEnded { html += " · ended" }
        html += "</div>"
        if let desired = run.desired, run.shown.map({ !desired.looksLike($0) }) ?? true {
            html += "<div class=\"pending\">"
            html += CardSVG.render(
                desired.layout,
                options: .init(id: anchor + "-desired", role: "desired", buttons: buttons(desired.content)))
            html += "<div class=\"caption\">Desired, not acknowledged yet</div></div>"
        }
        return html
    }

    static func buttons(_ content: [String: JSONValue]) -> [String] {
        ["url_action", "secondary_url_action"].compactMap { content[$0]?["title"]?.stringValue }
    }

    static func badge(_ run: StatusSnapshot.Run) -> String {
        let (text, tone): (String, String)
        switch (run.status, run.conclusion) {
        case ("queued", _): (text, tone) = ("Queued", "neutral")
        case ("in_progress", _): (text, tone) = ("In progress", "running")
        case (_, "success"?): (text, tone) = ("Succeeded", "good")
        case (_, "failure"?), (_, "timed_out"?), (_, "startup_failure"?):
            (text, tone) = (run.conclusion == "failure" ? "Failed" : humanized(run.conclusion ?? ""), "bad")
        case (_, "action_required"?): (text, tone) = ("Needs approval", "warn")
        case (_, let conclusion?): (text, tone) = (humanized(conclusion), "neutral")
        default: (text, tone) = (humanized(run.status), "neutral")
        }
        return "<span class=\"badge \(tone)\">\(Markup.escaped(text))</span>"
    }

    static func phaseText(_ phase: ActivitySession.Phase?) -> String {
        switch phase {
        case .needsCreate?: "creating"
        case .needsFirstFrame?: "first frame pending"
        case .live?: "live"
        case .finalShown?: "showing the end"
        case .ended?: "ended"
        case nil: "no card"
        }
    }

    // MARK: Push budget

    /// The header's line on the budget: what PushWard counted of the allowance, when it starts
    /// over, and the level new runs get, so a maintainer sees why cards look thinner than usual.
    /// Recovery from GitHub (`github.api`): the last sweep, what was asked for again since the
    /// start, what was given up on, runs looked up, the API allowance left, and what blocks it.
    static func recoverySection(_ recovery: RecoveryBoard.Standing) -> String {
        var html = "<section id=\"recovery\"><h2>Recovery from GitHub</h2><p>"
        html += recovery.lastSweepAt.map { "Last sweep \(Markup.escaped(clock($0))) UTC" } ?? "No sweep yet"
        html +=
            " · <span id=\"redeliveries\">\(recovery.redeliveriesRequested)</span> redeliveries asked for since the start"
        if recovery.givenUp > 0 { html += " · \(recovery.givenUp) given up on" }
        html += " · \(recovery.runsLookedUp) quiet runs looked up"
        if let remaining = recovery.rateLimitRemaining {
            html += " · GitHub API: \(remaining)"
            html += recovery.rateLimitLimit.map { " of \($0)" } ?? ""
            html += " requests left this hour"
        }
        html += "</p>"
        if let problem = recovery.problem {
            html += "<p class=\"problem\" role=\"alert\">\(Markup.escaped(problem))</p>"
        }
        return html + "</section>"
    }

    /// Several instances on one PostgreSQL database: whether this one leads and, on a follower,
    /// which instance does, so an operator who reached any instance knows where cards are sent
    /// from and whose log to read. A leader whose heartbeat stopped is said plainly: the next
    /// instance to poll takes over once its session ends.
    static func leadershipSection(_ leadership: StatusSnapshot.Leadership, now: UnixTime) -> String {
        let role = leadership.leads ? "leader" : "follower"
        var html = "<section id=\"leadership\" data-role=\"\(role)\"><h2>Instances</h2><p>"
        let leader = leadership.leader
        let described = leader.map {
            "<span id=\"leader\">\(Markup.escaped($0.holder))</span> (epoch \($0.epoch), leading since "
                + "\(Markup.escaped(clock($0.since))) UTC)"
        }
        if leadership.leads {
            html += "This instance leads" + (described.map { ": " + $0 } ?? "") + ". It applies the deliveries every"
            html += " instance commits, sends to PushWard, sweeps GitHub's delivery log and prunes."
        } else {
            html += "This instance follows: it verifies and commits deliveries for the leader, and this page reads"
            html += " the shared database. "
            html +=
                described.map { $0 + " leads: it applies them, sends to PushWard and sweeps GitHub." }
                ?? "No instance has taken the lead yet."
        }
        html += "</p>"
        if let leader, !leadership.leads, now - leader.heartbeatAt > staleHeartbeat {
            html += "<p class=\"problem\" role=\"alert\">No heartbeat from the leader for "
            html += "\(Int(now - leader.heartbeatAt)) s: an instance that polls takes the lead once its session ends"
            html += " (3 s by default). If this lasts, no instance can reach the lease: see their logs.</p>"
        }
        return html + "</section>"
    }

    /// Seconds without a leader heartbeat before the page calls it out: several heartbeats missed,
    /// past the session timeout that hands the lead over.
    static let staleHeartbeat: Double = 10

    /// The newest presses of buttons on phones: who asked what of which run, and GitHub's answer.
    static func actionsSection(_ actions: [ActionRecord]) -> String {
        var html = "<section id=\"actions\"><h2>Actions from phones</h2><ul class=\"actions\">"
        for action in actions {
            html += "<li data-action=\"\(action.kind.rawValue)\" data-state=\"\(action.state.rawValue)\">"
            html += "<span class=\"dim\">\(Markup.escaped(clock(action.pressedAt))) UTC</span> "
            html += "\(Markup.escaped(action.run.repository)) run \(action.run.runID) attempt \(action.run.attempt): "
            html += "\(Markup.escaped(action.person)) asked for \(Markup.escaped(ActionSummary.what(action))) "
            html += "from the \(Markup.escaped(action.surface)); \(Markup.escaped(ActionSummary.outcome(action)))</li>"
        }
        return html + "</ul></section>"
    }

    static func budgetSummary(_ standing: (budget: PushBudget?, levelInForce: Fidelity?)) -> String {
        var text: String
        if let budget = standing.budget {
            text = "\(BudgetChart.grouped(budget.used)) / "
            text += budget.limit.map { BudgetChart.grouped($0) } ?? "unlimited"
            text += " updates"
            if let reset = budget.resetsAt { text += " · resets \(GitHubTimestamp.format(reset).prefix(10))" }
        } else {
            // The daemon reads PushWard's count only when the level is `auto`, and not before it
            // first asks: say it was not read rather than imply there is none.
            text = "budget not read"
        }
        text += " · level " + (standing.levelInForce?.rawValue ?? "not chosen yet")
        return "<span id=\"budget\" class=\"budget\">\(Markup.escaped(text))</span>"
    }

    /// The month chart, under the header: the budget's period day by day.
    static func budgetSection(_ snapshot: StatusSnapshot, budget: PushBudget?) -> String {
        let input = BudgetChart.Input(
            period: .of(resetsAt: budget?.resetsAt, now: snapshot.takenAt), now: snapshot.takenAt,
            days: snapshot.pushDays, used: budget?.used, limit: budget?.limit, decisions: snapshot.decisions)
        var html = "<section id=\"month\"><h2>Updates this period</h2><div class=\"chart\">"
        html += BudgetChart.render(input)
        html += "<p class=\"legend\"><span class=\"key bars\"></span>acknowledged per day (right scale)"
        html += "<span class=\"key forecast\"></span>forecast to the reset at the average so far"
        html += "<span class=\"key limit\"></span>limit<span class=\"key level\"></span>level changed</p>"
        return html + "</div></section>"
    }

    // MARK: History tables

    static func requestTable(_ pushes: [RequestRecord]) -> String {
        guard !pushes.isEmpty else { return "<p class=\"none\">No requests yet.</p>" }
        var html = "<div class=\"table\"><table class=\"requests\"><thead><tr><th>Time</th><th>Kind</th>"
        html += "<th>Request</th><th>Status</th><th>Outcome</th></tr></thead><tbody>"
        for push in pushes.prefix(tableRows) {
            html += "<tr><td class=\"time\" title=\"\(Markup.escaped(GitHubTimestamp.format(push.sentAt)))\">"
            html += "\(Markup.escaped(clock(push.sentAt)))</td><td>\(Markup.escaped(push.kind))</td>"
            html += "<td><code>\(Markup.escaped(push.method)) \(Markup.escaped(push.path))</code></td>"
            html += "<td class=\"num\">\(push.status.map(String.init) ?? "–")</td>"
            html += "<td><span class=\"tag \(tone(push: push.outcome))\">\(Markup.escaped(push.outcome))</span>"
            if let detail = push.detail, !detail.isEmpty {
                html += " <span class=\"dim\">\(Markup.escaped(detail))</span>"
            }
            html += "</td></tr>"
        }
        html += "</tbody></table></div>"
        if pushes.count > tableRows {
            html += "<p class=\"more\">\(pushes.count - tableRows) older requests: see the JSON.</p>"
        }
        return html
    }

    static func deliveryTable(_ deliveries: [DeliveryRecord]) -> String {
        guard !deliveries.isEmpty else { return "<p class=\"none\">No deliveries.</p>" }
        var html = "<div class=\"table\"><table class=\"deliveries\"><thead><tr><th>Time</th><th>Event</th>"
        html += "<th>Outcome</th><th>Reason</th></tr></thead><tbody>"
        for delivery in deliveries.prefix(tableRows) {
            let event = delivery.event + (delivery.action.map { "." + $0 } ?? "")
            html += "<tr><td class=\"time\" title=\"\(Markup.escaped(GitHubTimestamp.format(delivery.receivedAt)))\">"
            html += "\(Markup.escaped(clock(delivery.receivedAt)))</td>"
            html += "<td><a href=\"/api/deliveries/\(PercentEncoding.pathSegment(delivery.id))\">"
            html += "<code>\(Markup.escaped(event))</code>"
            html += "</a></td><td><span class=\"tag \(tone(delivery: delivery.outcome))\">"
            html +=
                "\(Markup.escaped(delivery.outcome.rawValue))</span></td><td>\(Markup.escaped(delivery.reason ?? ""))"
            if delivery.duplicates > 0 {
                html += " <span class=\"dim\">+\(delivery.duplicates) redelivered</span>"
            }
            html += "</td></tr>"
        }
        html += "</tbody></table></div>"
        if deliveries.count > tableRows {
            html += "<p class=\"more\">\(deliveries.count - tableRows) older deliveries: see the JSON.</p>"
        }
        return html
    }

    static func tone(push outcome: String) -> String {
        switch outcome {
        case "acknowledged": "good"
        case "dry-run": "neutral"
        case "rejected", "unauthorized", "quota_exhausted": "bad"
        default: "warn"
        }
    }

    static func tone(delivery outcome: DeliveryRecord.Outcome) -> String {
        switch outcome {
        case .applied: "good"
        case .ignored: "neutral"
        case .rejected: "bad"
        }
    }

    // MARK: Text

    /// `HH:MM:SS` (UTC); the full timestamp is in the cell's title.
    static func clock(_ time: UnixTime) -> String {
        let stamp = GitHubTimestamp.format(time)
        guard let t = stamp.firstIndex(of: "T") else { return stamp }
        return String(stamp[stamp.index(after: t)...].prefix(8))
    }

    static func ago(_ time: UnixTime, now: UnixTime) -> String {
        let seconds = Int(max(0, now - time))
        if seconds < 5 { return "just now" }
        if seconds < 60 { return "\(seconds) s ago" }
        if seconds < 3600 { return "\(seconds / 60) min ago" }
        if seconds < 86_400 { return "\(seconds / 3600) h ago" }
        return "\(seconds / 86_400) d ago"
    }

    static func humanized(_ text: String) -> String {
        let spaced = text.replacingOccurrences(of: "_", with: " ")
        return spaced.prefix(1).uppercased() + spaced.dropFirst()
    }

    // MARK: Style

    static let stylesheet = """
        :root{color-scheme:light dark;--bg:#f2f2f7;--panel:#fff;--text:#1c1c1e;--dim:#6e6e73;--line:#e5e5ea;\
        --good:#248a3d;--bad:#d70015;--warn:#c93400;--run:#0071e3;--code:#f5f5f7}
        @media (prefers-color-scheme:dark){:root{--bg:#000;--panel:#161618;--text:#f5f5f7;--dim:#98989d;\
        --line:#2c2c2e;--good:#30d158;--bad:#ff453a;--warn:#ff9f0a;--run:#0a84ff;--code:#232326}}
        *{box-sizing:border-box}
        body{margin:0;background:var(--bg);color:var(--text);font:14px/1.45 -apple-system,BlinkMacSystemFont,\
        "SF Pro Text","Segoe UI",Roboto,Helvetica,Arial,sans-serif;-webkit-font-smoothing:antialiased}
        a{color:var(--run);text-decoration:none}a:hover{text-decoration:underline}
        code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
        .top{display:flex;align-items:center;justify-content:space-between;gap:16px;padding:18px 32px;\
        background:var(--panel);border-bottom:1px solid var(--line);position:sticky;top:0;z-index:1}
        .brand{display:flex;align-items:center;gap:10px;font-size:17px;font-weight:650;letter-spacing:-.01em;\
        white-space:nowrap}
        .logo{width:26px;height:26px;border-radius:7px;background:linear-gradient(135deg,#0a84ff,#5e5ce6)}
        .summary{display:flex;flex-wrap:wrap;align-items:center;gap:0 8px;color:var(--text);font-weight:550}
        .pulse{width:9px;height:9px;border-radius:50%;background:var(--run);box-shadow:0 0 0 0 rgba(0,113,227,.5);\
        animation:pulse 2s infinite}
        @keyframes pulse{70%{box-shadow:0 0 0 8px rgba(0,113,227,0)}100%{box-shadow:0 0 0 0 rgba(0,113,227,0)}}
        main{max-width:1180px;margin:0 auto;padding:8px 32px 24px}
        h2{font-size:13px;text-transform:uppercase;letter-spacing:.06em;color:var(--dim);margin:28px 4px 12px;\
        font-weight:600}
        .count{display:inline-block;min-width:20px;padding:0 7px;border-radius:10px;background:var(--line);\
        color:var(--dim);font-size:12px;font-weight:600;text-align:center;letter-spacing:0;margin-left:4px}
        .run{display:grid;grid-template-columns:360px minmax(0,1fr);gap:28px;background:var(--panel);\
        border-radius:20px;padding:22px;margin-bottom:16px;box-shadow:0 1px 2px rgba(0,0,0,.06),\
        0 4px 18px rgba(0,0,0,.04)}
        .run.active{box-shadow:0 0 0 2px rgba(0,113,227,.35),0 4px 18px rgba(0,0,0,.05)}
        .cards svg{display:block;filter:drop-shadow(0 6px 14px rgba(0,0,0,.18))}
        .caption{font-size:12px;color:var(--dim);margin:8px 4px 0;min-height:1em}
        .pending{margin-top:14px;opacity:.92}
        .title{display:flex;align-items:center;justify-content:space-between;gap:12px}
        h3{margin:0;font-size:18px;font-weight:650;letter-spacing:-.01em}
        h3 .sep{color:var(--dim);margin:0 6px;font-weight:400}
        h3 .number{color:var(--dim);font-weight:500}
        .badge{flex:none;padding:3px 10px;border-radius:999px;font-size:12px;font-weight:650}
        .badge.good{background:rgba(52,199,89,.15);color:var(--good)}
        .badge.bad{background:rgba(255,59,48,.13);color:var(--bad)}
        .badge.warn{background:rgba(255,149,0,.15);color:var(--warn)}
        .badge.running{background:rgba(0,122,255,.13);color:var(--run)}
        .badge.neutral{background:var(--line);color:var(--dim)}
        .meta{display:flex;flex-wrap:wrap;gap:6px 22px;margin:10px 0 0}
        .meta div{display:flex;gap:6px;align-items:baseline}
        .meta dt{color:var(--dim);font-size:12px}.meta dd{margin:0}
        .links{display:flex;gap:16px;margin:10px 0 4px;font-weight:550}
        .links .json{color:var(--dim);font-weight:500}
        .problem{margin:12px 0 4px;padding:10px 12px;border-radius:10px;background:rgba(255,59,48,.09);\
        color:var(--text);border-left:3px solid var(--bad)}
        .notice{margin:12px 0;padding:10px 14px;border-radius:10px;background:rgba(255,149,0,.12);\
        border-left:3px solid #ff9500}
        .alerts{margin:10px 0 4px}
        .alert{margin:4px 0;padding:6px 10px;border-radius:8px;font-size:13px;border-left:3px solid var(--dim)}
        .alert[data-reason=failure]{border-left-color:var(--bad)}
        .alert[data-state=failed]{opacity:.7}
        details{margin-top:12px}
        summary{cursor:pointer;font-weight:600;font-size:13px;padding:4px 0;user-select:none}
        summary .count{font-size:11px}
        .table{max-height:236px;overflow:auto;border:1px solid var(--line);border-radius:10px;margin-top:6px}
        table{width:100%;border-collapse:collapse;font-size:12.5px}
        th{position:sticky;top:0;background:var(--panel);text-align:left;font-weight:600;color:var(--dim);\
        font-size:11.5px;padding:6px 10px;border-bottom:1px solid var(--line)}
        td{padding:5px 10px;border-bottom:1px solid var(--line);vertical-align:top}
        tr:last-child td{border-bottom:0}
        td.time{color:var(--dim);font-variant-numeric:tabular-nums;white-space:nowrap}
        td.num{font-variant-numeric:tabular-nums}
        td code{background:var(--code);padding:1px 5px;border-radius:5px;white-space:nowrap}
        .tag{font-size:11.5px;font-weight:600;padding:1px 7px;border-radius:6px}
        .tag.good{color:var(--good);background:rgba(52,199,89,.12)}
        .tag.bad{color:var(--bad);background:rgba(255,59,48,.12)}
        .tag.warn{color:var(--warn);background:rgba(255,149,0,.13)}
        .tag.neutral{color:var(--dim);background:var(--line)}
        .dim{color:var(--dim)}.none,.more{color:var(--dim);font-size:12.5px;margin:6px 2px}
        .empty{background:var(--panel);border-radius:20px;padding:28px;margin-top:28px}
        .empty h2{margin-top:0}
        .budget{color:var(--dim);font-weight:500}
        .decision{margin:8px 0 0;font-size:12.5px}
        .chart{background:var(--panel);border-radius:20px;padding:16px 18px 10px;box-shadow:0 1px 2px rgba(0,0,0,.06),\
        0 4px 18px rgba(0,0,0,.04)}
        .chart svg{display:block}
        .legend{display:flex;flex-wrap:wrap;align-items:center;gap:4px 6px;color:var(--dim);font-size:12px;\
        margin:6px 2px 0}
        .legend .key{display:inline-block;width:14px;height:10px;margin-left:10px;border-radius:2px}
        .key.bars{background:rgba(0,113,227,.55)}.key.forecast{border-top:2px dashed #c93400;height:0}
        .key.limit{border-top:2px solid #d70015;height:0}.key.level{border-left:1px dashed var(--dim);width:1px}
        footer{text-align:center;color:var(--dim);font-size:12px;padding:8px 0 32px}
        @media (max-width:820px){.run{grid-template-columns:minmax(0,1fr)}.top,main{padding-left:16px;\
        padding-right:16px}}\
        .widget{background:var(--panel);border-radius:12px;padding:12px 16px;margin:8px 0}\
        .stats{display:grid;grid-template-columns:auto 1fr;gap:2px 12px;margin:6px 0}.stats dt{color:var(--dim)}\
        .stats dd{margin:0}
        """
}
