import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Buttons pressed on a phone, through the whole daemon: the test is the phone. It reads each
/// button's URL from what the fake PushWard stored (the card's `secondary_url_action`, a
/// notification's `actions`), calls it on the webhook listener exactly as the button says, and
/// checks what the fake GitHub API was asked, what the audit kept and what the card then shows.
@Suite("Actions end to end", .serialized, .timeLimit(.minutes(3)))
struct ActionEndToEndTests {
    static let secret = "actions-secret-0123456"
    static let token = "ghp_actions_test_token"
    static let publicURL = "https://hooks.example.com/bridge"
    /// The `rules` member every test's actions get unless it names its own.
    static let reviewRules = #""rules": [{"offer": ["rerun", "cancel", "approve"], "approvers": ["mona"]}]"#
    static let failing: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 5)], [RunScript.Job("test (linux)", duration: 10, conclusion: "failure")],
    ]

    /// A daemon with `actions` on, delivering to `pushward` and acting on `github`.
    final class Bridge: @unchecked Sendable {
        let daemon: Daemon
        let directory: String
        let databasePath: String
        let pushward: FakePushWardServer
        let github: FakeGitHubAPI
        let logs = LineLog()

        /// `actions` adds members to the section (a fragment); `topLevel` adds top-level keys (a
        /// fragment ending in a comma), such as `"alerts": {},`.
        init(actions: String = "", topLevel: String = "") throws {
            pushward = try FakePushWardServer()
            github = try FakeGitHubAPI(
                secret: ActionEndToEndTests.secret, credentials: .token(ActionEndToEndTests.token))
            directory = NSTemporaryDirectory() + "actions-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            databasePath = directory + "/bridge.sqlite"
            // Every button unless the test names its rules; Approve for mona, who starts no run here.
            let rules = actions.contains(#""rules""#) ? "" : ", " + ActionEndToEndTests.reviewRules
            let section =
                #""public_url": "\#(ActionEndToEndTests.publicURL)""# + (actions.isEmpty ? "" : ", " + actions) + rules
            let json = """
                {"listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(databasePath)",
                 \(topLevel)
                 "activity": {"completion_grace": "1h"},
                 "actions": {\(section)},
                 "github": {"webhook_secrets": ["\(ActionEndToEndTests.secret)"],
                            "api": {"url": "\(github.baseURL)", "token": "\(ActionEndToEndTests.token)"}},
                 "pushward": {"url": "\(pushward.baseURL)", "api_key": "\(pushward.apiKey)", "end_delay": "0s",
                              "end_display_time": "0s", "min_update_interval": "0s", "fidelity": "full",
                              "coalesce": "0s", "max_updates_per_hour": 3600}}
                """
            let logs = logs
            daemon = try Daemon.start(
                configuration: try BridgeConfiguration(json: Data(json.utf8)),
                logger: Logger(label: "test", minimumLevel: .debug, sink: { logs.append($0) }))
            github.setWebhookURL("http://127.0.0.1:\(daemon.port)/webhook")
        }

        /// Stops the daemon too (a second stop does nothing): a test that failed a `#require` before
        /// its own `shutdown()` otherwise left the daemon serving for the rest of the run, holding
        /// its two listeners' threads and descriptors and its database, whose directory was gone.
        deinit {
            let (daemon, directory) = (daemon, directory)
            Thread.detachNewThread {
                daemon.stop()
                try? FileManager.default.removeItem(atPath: directory)
            }
        }

        func deliver(_ events: [WebhookEvent]) async {
            #expect(await github.deliver(events).allSatisfy { $0 == 202 })
        }

        /// The card's slug: the repository's, or a routed person's own.
        var slug = RecoveryEndToEndTests.slug

        /// The card as PushWard holds it.
        var card: StoredActivity? { pushward.activities[slug] }

        /// The URL of the card's secondary button, when it acts (points at `/actions/`).
        var cardButton: (title: String, url: String)? {
            guard let button = card?.content["secondary_url_action"]?.objectValue,
                let url = button["url"]?.stringValue, url.hasPrefix(ActionEndToEndTests.publicURL + "/actions/")
            else { return nil }
            return (button["title"]?.stringValue ?? "", url)
        }

        /// What the phone does when the button is tapped: the button's method and URL, no headers
        /// or body of its own, with the public URL's origin and path prefix (a reverse proxy's
        /// job) mapped onto the listener.
        func press(_ url: String, method: String = "POST") async throws -> (status: Int, body: JSONValue?) {
            let path = String(url.dropFirst(ActionEndToEndTests.publicURL.count))
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(daemon.port)\(path)")!)
            request.httpMethod = method
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONValue(parsing: data))
        }

        func actions(runID: Int) throws -> [ActionRecord] {
            try BridgeDatabase(path: databasePath, readOnly: true).actions(repository: "acme/widgets", runID: runID)
        }

        /// When the newest live `kind` token of run `runID` (attempt 1) expires, by the same query
        /// the daemon asks before it re-issues a button; nil once none is live.
        func liveTokenExpiry(_ kind: ActionKind, runID: Int) -> UnixTime? {
            let run = RunKey(repository: "acme/widgets", runID: runID, attempt: 1)
            return try? BridgeDatabase(path: databasePath, readOnly: true)
                .liveTokenExpiry(kind, run: run, at: Date().timeIntervalSince1970)
        }
    }

    static func script(_ runID: Int, ago: Double = 900) -> RunScript {
        RunScript(runID: runID, runNumber: runID, start: Date().timeIntervalSince1970 - ago, firstJobID: runID * 100)
    }

    static func eventually(timeout: Double = 20, _ condition: () -> Bool) async -> Bool {
        await DispatchEndToEndTests.eventually(timeout: timeout, condition)
    }

    static func rerunPath(_ runID: Int) -> String { "/repos/acme/widgets/actions/runs/\(runID)/rerun-failed-jobs" }

    /// True when something accepts a TCP connection on loopback `port`.
    static func listening(_ port: Int) -> Bool {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { return false }
        defer { close(socketDescriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    @Test("a Bridge let go without shutdown() stops its daemon: no listener, no database left behind")
    func releasedBridgeStops() async throws {
        var bridge: Bridge? = try Bridge()
        let (port, adminPort, directory) = try #require(
            bridge.map { ($0.daemon.port, $0.daemon.adminPort, $0.directory) })
        #expect(Self.listening(port) && Self.listening(adminPort))
        bridge = nil
        #expect(await Self.eventually { !Self.listening(port) && !Self.listening(adminPort) })
        #expect(await Self.eventually { !FileManager.default.fileExists(atPath: directory) })
    }

    @Test("re-run from the failed end frame: GitHub is asked once, the card says who asked, the audit keeps it")
    func rerunFromTheCard() async throws {
        let bridge = try Bridge(topLevel: #""alerts": {},"#)
        await bridge.deliver(Self.script(1).deliveries(waves: Self.failing))
        #expect(await Self.eventually { bridge.card?.state == "ended" && bridge.cardButton != nil })
        let button = try #require(bridge.cardButton)
        #expect(button.title == "Re-run failed jobs")
        #expect(bridge.card?.content["secondary_url_action"]?["method"] == "POST")
        // The alert of the failure carries the same action, with a token of its own.
        #expect(await Self.eventually { bridge.pushward.acceptedNotifications.count == 1 })
        let alertAction = try #require(bridge.pushward.acceptedNotifications.first?.body["actions"]?.arrayValue?.first)
        #expect(alertAction["id"] == "rerun")
        #expect(alertAction["authentication_required"] == true)
        let alertURL = try #require(alertAction["url"]?.stringValue)
        #expect(alertURL != button.url)

        let pressed = try await bridge.press(button.url)
        #expect(pressed.status == 200)
        #expect(pressed.body?["status"] == "done")
        #expect(bridge.github.actions.map { "\($0.method) \($0.path)" } == ["POST \(Self.rerunPath(1))"])
        #expect(
            await Self.eventually { bridge.card?.content["state"]?.stringValue?.hasPrefix("Re-run requested") == true })
        #expect(bridge.card?.content["secondary_url_action"]?["url"]?.stringValue?.contains("/actions/") != true)

        // A replay, the alert's copy of the same action, a forged token, a malformed one: nothing.
        let forged = Self.publicURL + "/actions/" + String(repeating: "A", count: 44)
        for url in [button.url, alertURL, forged, Self.publicURL + "/actions/short", Self.publicURL + "/actions/"] {
            let again = try await bridge.press(url)
            #expect(again.status == 404, "\(url)")
            #expect(again.body == ["error": "not_found"], "the answer never says why")
        }
        #expect(try await bridge.press(alertURL, method: "GET").status == 405)
        #expect(bridge.github.actions.count == 1, "one press, one call")

        let audit = try bridge.actions(runID: 1)
        #expect(audit.map(\.state) == [.done])
        #expect(audit.first?.kind == .rerun)
        #expect(audit.first?.person == "anyone the key reaches")
        #expect(audit.first?.surface == "card \(RecoveryEndToEndTests.slug)")
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        let stored = try BridgeDatabase(path: bridge.databasePath, readOnly: true)
        let tokens = try stored.connection.query("SELECT count(*) FROM action_tokens") { $0.int(0) ?? 0 }
        #expect(tokens.first ?? 0 >= 2)
        let pushes = try stored.connection.query("SELECT body FROM pushes") { $0.string(0) ?? "" }
        #expect(pushes.allSatisfy { !$0.contains(String(button.url.suffix(44))) }, "tokens never sit in stored bodies")
        await bridge.daemon.shutdown()
    }

    @Test("cancel from the running card; a cancel token of an attempt that ended does nothing")
    func cancel() async throws {
        let bridge = try Bridge()
        let script = Self.script(2)
        let running = [
            script.run("requested", at: 0), script.run("in_progress", at: 1),
            script.job(200, "build", "queued", createdAt: 2),
            script.job(200, "build", "in_progress", createdAt: 2, startedAt: 3),
        ]
        await bridge.deliver(running)
        #expect(await Self.eventually { bridge.cardButton?.title == "Cancel" })
        let button = try #require(bridge.cardButton)
        #expect(try await bridge.press(button.url).status == 200)
        #expect(bridge.github.actions.map(\.path) == ["/repos/acme/widgets/actions/runs/2/cancel"])
        #expect(
            await Self.eventually { bridge.card?.content["state"]?.stringValue?.hasPrefix("Cancel requested") == true })
        // GitHub's deliveries move the card on: the run is cancelled, the note gives way.
        await bridge.deliver([
            script.job(200, "build", "completed", createdAt: 2, startedAt: 3, completedAt: 9, conclusion: "cancelled"),
            script.run("completed", at: 10, conclusion: "cancelled"),
        ])
        #expect(await Self.eventually { bridge.card?.state == "ended" })
        #expect(bridge.card?.content["state"]?.stringValue?.hasPrefix("Cancel requested") != true)

        // A second run: its Cancel is taken while it runs, then it ends before the press.
        let late = Self.script(3)
        await bridge.deliver([
            late.run("requested", at: 0), late.run("in_progress", at: 1),
            late.job(300, "build", "in_progress", createdAt: 2, startedAt: 3),
        ])
        #expect(await Self.eventually { bridge.cardButton?.title == "Cancel" && bridge.card?.state != "ended" })
        let stale = try #require(bridge.cardButton)
        await bridge.deliver([
            late.job(300, "build", "completed", createdAt: 2, startedAt: 3, completedAt: 9, conclusion: "success"),
            late.run("completed", at: 10, conclusion: "success"),
        ])
        #expect(await Self.eventually { bridge.card?.state == "ended" })
        #expect(try await bridge.press(stale.url).status == 404)
        #expect(bridge.github.actions.count == 1, "nothing asked for the ended attempt")
        #expect(try bridge.actions(runID: 3).map(\.state) == [.notApplicable])
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        await bridge.daemon.shutdown()
    }

    static func waiting(_ script: RunScript, environment: String?) -> [WebhookEvent] {
        let id = script.firstJobID
        return [
            script.run("requested", at: 0), script.run("in_progress", at: 1),
            script.job(id, "build", "in_progress", createdAt: 2, startedAt: 3),
            script.job(id, "build", "completed", createdAt: 2, startedAt: 3, completedAt: 20, conclusion: "success"),
            script.job(id + 1, "deploy", "waiting", createdAt: 21, environment: environment),
        ]
    }

    @Test("approve and reject from the waiting notification: the environment's id, the state and a comment")
    func review() async throws {
        let bridge = try Bridge()
        // A hostile environment name: it reaches a notification body, a comment and the audit.
        let environment = "prod\u{202E}noitcudorp\u{202C} «東京» 👩‍🚀"
        bridge.github.setPendingDeployments(
            repository: "acme/widgets", runID: 4, [.init(id: 77, name: environment), .init(id: 78, name: "other")])
        await bridge.deliver(Self.waiting(Self.script(4), environment: environment))
        #expect(await Self.eventually { bridge.pushward.acceptedNotifications.count == 1 })
        let alert = try #require(bridge.pushward.acceptedNotifications.first?.body)
        let actions = try #require(alert["actions"]?.arrayValue)
        #expect(actions.map { $0["id"] } == ["approve", "reject"])
        #expect(actions.map { $0["method"] } == ["POST", "POST"])
        #expect(actions.map { $0["authentication_required"] } == [true, true])
        #expect(actions[1]["destructive"] == true)
        #expect(alert["body"]?.stringValue?.contains("\u{202E}") == false, "no bidi override in what a person reads")

        let approve = try #require(actions[0]["url"]?.stringValue)
        let reject = try #require(actions[1]["url"]?.stringValue)
        #expect(try await bridge.press(approve).status == 200)
        let pending = "/repos/acme/widgets/actions/runs/4/pending_deployments"
        #expect(bridge.github.requests.contains { $0.method == "GET" && $0.path.hasPrefix(pending) })
        let calls = bridge.github.actions
        #expect(calls.map(\.method) == ["POST"])
        #expect(calls.allSatisfy { $0.path == "/repos/acme/widgets/actions/runs/4/pending_deployments" })
        let review = try #require(calls.last?.body)
        #expect(review["environment_ids"] == [77])
        #expect(review["state"] == "approved")
        #expect(review["comment"]?.stringValue?.contains("pushward-bridge") == true)
        // The other answer to the same question is spent with it.
        #expect(try await bridge.press(reject).status == 404)
        #expect(bridge.github.actions.count == 1)
        let audit = try bridge.actions(runID: 4)
        #expect(audit.map(\.kind) == [.approve])
        #expect(audit.first?.environment == environment)
        #expect(audit.first?.state == .done)

        // A second waiting run, rejected.
        bridge.github.setPendingDeployments(repository: "acme/widgets", runID: 5, [.init(id: 90, name: "staging")])
        await bridge.deliver(Self.waiting(Self.script(5), environment: "staging"))
        #expect(await Self.eventually { bridge.pushward.acceptedNotifications.count == 2 })
        let second = try #require(bridge.pushward.acceptedNotifications.last?.body["actions"]?.arrayValue)
        #expect(try await bridge.press(try #require(second[1]["url"]?.stringValue)).status == 200)
        #expect(bridge.github.actions.last?.body?["state"] == "rejected")
        #expect(bridge.github.actions.last?.body?["environment_ids"] == [90])
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        await bridge.daemon.shutdown()
    }

    /// The approve and reject URLs of the newest notification, once one with them came.
    static func reviewButtons(_ bridge: Bridge, count: Int) async throws -> (approve: String, reject: String) {
        #expect(await Self.eventually { bridge.pushward.acceptedNotifications.count == count })
        let actions = try #require(bridge.pushward.acceptedNotifications.last?.body["actions"]?.arrayValue)
        #expect(actions.map { $0["id"] } == ["approve", "reject"])
        return (try #require(actions[0]["url"]?.stringValue), try #require(actions[1]["url"]?.stringValue))
    }

    @Test(
        "GitHub's waiting delivery names no environment: in either order with the one that does, the button approves that one"
    )
    func reviewWithoutDeployment() async throws {
        let bridge = try Bridge()
        let pending = "/repos/acme/widgets/actions/runs/12/pending_deployments"
        // The waiting delivery first, as GitHub sends it (no `deployment`): the environment is
        // GitHub's only pending one, asked before the notification goes.
        // A hostile name (an environment's admin chooses it): bidi, emoji, long.
        let hostile = "prod\u{202E}noitcudorp\u{202C} «東京» 👩‍🚀 " + String(repeating: "x", count: 200)
        bridge.github.setPendingDeployments(repository: "acme/widgets", runID: 12, [.init(id: 11, name: hostile)])
        let first = Self.script(12)
        await bridge.deliver(Self.waiting(first, environment: nil))
        let early = try await Self.reviewButtons(bridge, count: 1)
        #expect(bridge.github.requests.contains { $0.method == "GET" && $0.path == pending })
        await bridge.deliver([first.job(first.firstJobID + 1, "deploy", "waiting", createdAt: 21, environment: hostile)]
        )
        #expect(try await bridge.press(early.approve).status == 200)
        #expect(bridge.github.actions.last?.body?["environment_ids"] == [11])
        #expect(bridge.github.actions.last?.body?["state"] == "approved")
        #expect(try bridge.actions(runID: 12).map(\.environment) == [hostile])

        // The named delivery first, then GitHub's waiting one: the name stays, and of the two
        // environments waiting only the named one is rejected.
        bridge.github.setPendingDeployments(
            repository: "acme/widgets", runID: 13, [.init(id: 21, name: "staging"), .init(id: 22, name: "production")])
        let second = Self.script(13)
        let id = second.firstJobID + 1
        await bridge.deliver(Array(Self.waiting(second, environment: "production").dropLast()))
        await bridge.deliver([
            second.job(id, "deploy", "waiting", createdAt: 21, environment: "production"),
            second.job(id, "deploy", "waiting", createdAt: 21),
        ])
        let late = try await Self.reviewButtons(bridge, count: 2)
        #expect(try await bridge.press(late.reject).status == 200)
        #expect(bridge.github.actions.last?.body?["environment_ids"] == [22], "never staging too")
        #expect(bridge.github.actions.last?.body?["state"] == "rejected")
        #expect(try await bridge.press(late.approve).status == 404, "the other answer is spent with it")
        #expect(bridge.github.actions.count == 2)
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        await bridge.daemon.shutdown()
    }

    @Test("several environments wait and no delivery names the job's: the notification goes without review buttons")
    func reviewAmbiguous() async throws {
        let bridge = try Bridge()
        bridge.github.setPendingDeployments(
            repository: "acme/widgets", runID: 14, [.init(id: 11, name: "staging"), .init(id: 22, name: "production")])
        await bridge.deliver(Self.waiting(Self.script(14), environment: nil))
        #expect(await Self.eventually { bridge.pushward.acceptedNotifications.count == 1 })
        let alert = try #require(bridge.pushward.acceptedNotifications.first?.body)
        #expect(alert["actions"] == nil, "a button would approve a guess")
        #expect(alert["title"] != nil, "the review is still said")
        #expect(bridge.logs.all.contains { $0.contains("goes without Approve and Reject") })
        let stored = try BridgeDatabase(path: bridge.databasePath, readOnly: true)
        let reviews = try stored.connection.query(
            "SELECT count(*) FROM action_tokens WHERE action IN ('approve', 'reject')"
        ) { $0.int(0) ?? 0 }
        #expect(reviews == [0], "no token without a known environment")
        #expect(bridge.github.actions.isEmpty)
        await bridge.daemon.shutdown()
    }

    @Test("GitHub refuses (403): the press answers 502, the card and an alert say why, the audit keeps GitHub's answer")
    func refused() async throws {
        let bridge = try Bridge()
        bridge.github.refuseActions(status: 403, message: "Resource not accessible by integration")
        await bridge.deliver(Self.script(6).deliveries(waves: Self.failing))
        #expect(await Self.eventually { bridge.cardButton != nil && bridge.card?.state == "ended" })
        let pressed = try await bridge.press(try #require(bridge.cardButton).url)
        #expect(pressed.status == 502)
        #expect(pressed.body?["github_status"] == 403)
        #expect(bridge.github.actions.map(\.path) == [Self.rerunPath(6)])
        #expect(
            await Self.eventually {
                bridge.card?.content["state"]?.stringValue?.hasPrefix("Re-run failed") == true
            })
        #expect(bridge.card?.content["state"]?.stringValue?.contains("Resource not accessible by integration") == true)
        // No `alerts` section: the refusal is said all the same.
        #expect(await Self.eventually { bridge.pushward.acceptedNotifications.count == 1 })
        let alert = try #require(bridge.pushward.acceptedNotifications.last?.body)
        #expect(alert["title"]?.stringValue?.contains("re-run failed") == true)
        #expect(alert["body"]?.stringValue?.contains("Resource not accessible by integration") == true)
        let audit = try #require(try bridge.actions(runID: 6).first)
        #expect(audit.state == .refused)
        #expect(audit.githubStatus == 403)
        #expect(bridge.logs.all.contains { $0.contains("GitHub refused an action asked from a phone") })
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        await bridge.daemon.shutdown()
    }

    @Test("an expired token does nothing", .timeLimit(.minutes(1)))
    func expired() async throws {
        let bridge = try Bridge(actions: #""token_ttl": "10s""#)
        await bridge.deliver(Self.script(7).deliveries(waves: Self.failing))
        #expect(await Self.eventually { bridge.cardButton != nil && bridge.card?.state == "ended" })
        let button = try #require(bridge.cardButton)
        #expect(bridge.liveTokenExpiry(.rerun, runID: 7) != nil, "the button's token is live at first")
        // Waits for the expiry itself, as the store records it, not a fixed 11 s from now: the
        // token's life started at the mint, which a sanitizer's slower start may put long before
        // the card is seen.
        #expect(await Self.eventually(timeout: 15) { bridge.liveTokenExpiry(.rerun, runID: 7) == nil })
        #expect(try await bridge.press(button.url).status == 404)
        #expect(bridge.github.actions.isEmpty)
        #expect(try bridge.actions(runID: 7).isEmpty, "an expired token is not a press")
        await bridge.daemon.shutdown()
    }

    @Test(
        "a long run keeps a live Cancel: an update past half the token's life carries a new one",
        .timeLimit(.minutes(1)))
    func reissued() async throws {
        let bridge = try Bridge(actions: #""token_ttl": "10s""#)
        let script = Self.script(9)
        await bridge.deliver([
            script.run("requested", at: 0), script.run("in_progress", at: 1),
            script.job(900, "build", "in_progress", createdAt: 2, startedAt: 3),
        ])
        #expect(await Self.eventually { bridge.cardButton?.title == "Cancel" })
        let first = try #require(bridge.cardButton)
        // Past half the first token's life by the expiry the store holds (the daemon's own test,
        // `expiry < now + ttl / 2`), not a fixed 5.5 s after the card was seen.
        let expiry = try #require(bridge.liveTokenExpiry(.cancel, runID: 9))
        #expect(await Self.eventually(timeout: 15) { Date().timeIntervalSince1970 > expiry - 5 + 0.1 })
        await bridge.deliver([script.job(901, "test", "in_progress", createdAt: 4, startedAt: 5)])
        #expect(await Self.eventually { bridge.cardButton.map { $0.url != first.url } ?? false })
        let second = try #require(bridge.cardButton)
        #expect(try await bridge.press(second.url).status == 200)
        #expect(try await bridge.press(first.url).status == 404, "the older copy is spent with it")
        #expect(bridge.github.actions.map(\.path) == ["/repos/acme/widgets/actions/runs/9/cancel"])
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        await bridge.daemon.shutdown()
    }

    @Test("the audit in /api/runs/{id}, explain and the status page, hostile names escaped for each")
    func auditSurfaces() async throws {
        let bridge = try Bridge()
        let environment = "prod<script>alert(1)</script>\u{202E}\u{1B}[2J"
        bridge.github.setPendingDeployments(repository: "acme/widgets", runID: 10, [.init(id: 5, name: environment)])
        await bridge.deliver(Self.waiting(Self.script(10), environment: environment))
        #expect(await Self.eventually { bridge.pushward.acceptedNotifications.count == 1 })
        let actions = try #require(bridge.pushward.acceptedNotifications.first?.body["actions"]?.arrayValue)
        #expect(try await bridge.press(try #require(actions[0]["url"]?.stringValue)).status == 200)

        let port = bridge.daemon.adminPort
        let document = try JSONValue(parsing: Data(try await AlertEndToEndTests.get("/api/runs/10", port: port).utf8))
        let recorded = try #require(document.arrayValue?.first?["actions"]?.arrayValue?.first)
        #expect(recorded["action"] == "approve")
        #expect(recorded["environment"] == .string(environment), "JSON keeps the name as it is, escaped by JSON")
        #expect(recorded["state"] == "done")
        // Without routing the one review notification stands for every approver: the key's owner.
        #expect(recorded["person"] == "the key's owner, one of mona")
        #expect(recorded["surface"]?.stringValue?.hasPrefix("alert ") == true)

        let page = try await AlertEndToEndTests.get("/", port: port)
        #expect(page.contains("<section id=\"actions\">"))
        #expect(page.contains("data-action=\"approve\" data-state=\"done\""))
        #expect(page.contains("an approval of prod&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!page.contains("<script>") && !page.contains("\u{202E}") && !page.contains("\u{1B}"))

        let database = try BridgeDatabase(path: bridge.databasePath, readOnly: true)
        let stored = try #require(try database.runAttempts(runID: 10).first)
        let sentences = RunExplanation.sentences(
            RunExplanation.Facts(
                run: stored, session: nil, acknowledged: nil, requests: [], deliveries: [],
                settings: ActivitySettings(),
                actions: try database.actions(repository: "acme/widgets", runID: 10)))
        let said = try #require(sentences.first { $0.contains("asked for an approval") })
        #expect(said.contains("the key's owner, one of mona asked for an approval of prod<script>"))
        #expect(said.hasSuffix("GitHub took it."))
        await bridge.daemon.shutdown()
    }

    @Test("routed to a person: the card says who asked, the audit names the PushWard member")
    func routed() async throws {
        let bridge = try Bridge(topLevel: RoutingEndToEndTests.routed)
        bridge.pushward.setKeyKind(.organisation)
        bridge.slug = RoutingEndToEndTests.personalSlug
        await bridge.deliver(Self.script(11).deliveries(waves: Self.failing))
        #expect(await Self.eventually { bridge.card?.state == "ended" && bridge.cardButton != nil })
        #expect(await Self.eventually { bridge.pushward.acceptedNotifications.count == 1 })
        #expect(bridge.pushward.acceptedNotifications.first?.body["target"] == ["members": ["usr_123"]])
        #expect(try await bridge.press(try #require(bridge.cardButton).url).status == 200)
        #expect(
            await Self.eventually {
                bridge.card?.content["state"] == "Re-run requested by octocat"
            })
        let audit = try #require(try bridge.actions(runID: 11).first)
        #expect(audit.person == "octocat (members usr_123)")
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        await bridge.daemon.shutdown()
    }

    @Test("approvers with routing: a review each, to their member, tokens of their own; the press names its approver")
    func approversRouted() async throws {
        let bridge = try Bridge(
            actions: #""rules": [{"offer": ["approve"], "approvers": ["mona", "hubot", "octocat"]}]"#,
            topLevel: #""routing": {"members": {"octocat": "usr_123", "mona": "usr_mona", "hubot": "usr_hubot"}},"#)
        bridge.pushward.setKeyKind(.organisation)
        bridge.slug = RoutingEndToEndTests.personalSlug
        bridge.github.setPendingDeployments(repository: "acme/widgets", runID: 12, [.init(id: 5, name: "production")])
        // octocat started the run: the review goes to mona and hubot, never to octocat.
        await bridge.deliver(Self.waiting(Self.script(12), environment: "production"))
        #expect(await Self.eventually { bridge.pushward.acceptedNotifications.count == 2 })
        let reviews = bridge.pushward.acceptedNotifications.map(\.body)
        let targets = reviews.map { $0["target"]?["members"] }
        #expect(Set(targets) == [["usr_hubot"], ["usr_mona"]], "\(targets)")
        let urls = reviews.compactMap { $0["actions"]?.arrayValue?.first?["url"]?.stringValue }
        #expect(urls.count == 2 && Set(urls).count == 2, "each approver a token of their own")
        let monas = try #require(reviews.first { $0["target"]?["members"] == ["usr_mona"] })
        let approve = try #require(monas["actions"]?.arrayValue?.first?["url"]?.stringValue)
        #expect(try await bridge.press(approve).status == 200)
        #expect(await Self.eventually { bridge.github.actions.count == 1 })
        let audit = try #require(try bridge.actions(runID: 12).first)
        #expect(audit.kind == .approve)
        #expect(audit.person == "mona", "the record says whose token approved")
        #expect(bridge.pushward.violations.isEmpty, "\(bridge.pushward.violations)")
        await bridge.daemon.shutdown()
    }

    @Test("rules decide the buttons: a branch without a rule gets none, and a card without actions keeps its link")
    func rules() async throws {
        let bridge = try Bridge(
            actions: #""rules": [{"offer": ["rerun"], "branches": ["release/*"]}]"#, topLevel: #""alerts": {},"#)
        await bridge.deliver(Self.script(8).deliveries(waves: Self.failing))
        #expect(await Self.eventually { bridge.card?.state == "ended" })
        #expect(await Self.eventually { bridge.pushward.acceptedNotifications.count == 1 })
        #expect(bridge.pushward.acceptedNotifications.first?.body["actions"] == nil)
        #expect(bridge.cardButton == nil)
        #expect(bridge.card?.content["secondary_url_action"]?["title"] == "Commit", "the plain link stays")
        let stored = try BridgeDatabase(path: bridge.databasePath, readOnly: true)
        #expect(try stored.connection.query("SELECT count(*) FROM action_tokens") { $0.int(0) ?? 0 } == [0])
        await bridge.daemon.shutdown()
    }
}
