import BridgeCore
import Foundation
import GitHubClient

/// Sweeps: asks GitHub to send again what it failed to deliver: at start, every `sweep_interval`, and a
/// minute after a sweep that found something missed (the listener was unreachable, so more may
/// follow). Each sweep reads each hook's delivery log newest first, back to what the last sweep
/// resolved (or as far as GitHub keeps them: 3 days, 7 on an Enterprise Server), and requests redeliveries as `RedeliveryPlan` says, at most
/// `max_redeliveries_per_minute`, each counted in the store before it is sent. The redelivered
/// request comes through `POST /webhook` like any other: verified, deduplicated, applied in order.
extension GitHubRecovery {
    /// How often an instance that follows looks whether it leads now (PostgreSQL only).
    static let followerPoll: Double = 1

    /// The sweeps, until cancelled.
    func sweepUntilCancelled() async {
        var pacing = Pacing(perMinute: settings.maxRedeliveriesPerMinute)
        var found: Discovery?
        while !Task.isCancelled {
            // Several instances on PostgreSQL: the leader sweeps; the others would only spend the
            // API allowance asking for the same redeliveries again. A follower looks every second
            // whether it leads, so a new leader sweeps at once: the deliveries GitHub sent to an
            // instance that died are in the log as failed, and the sweep is what brings them back.
            guard client.fence.permits() else {
                try? await Task.sleep(for: .seconds(Self.followerPoll))
                continue
            }
            var missed = 0
            var pause = Double(settings.sweepInterval)
            var withheld = false
            for hook in await hooksToSweep(&found) where !withheld && client.fence.permits() {
                switch await sweep(hook, pacing: &pacing) {
                case .swept(let asked): missed += asked
                case .wait(let until): pause = min(pause, max(1, until - now()))
                case .failed: break
                case .withheld: withheld = true
                }
                if Task.isCancelled { return }
            }
            // The lead may have gone mid-sweep: nothing was swept; asked again from the top, as a
            // follower asks, so a lead that was only slow to renew sweeps again at once.
            if withheld { continue }
            board.update { $0.lastSweepAt = now() }
            if missed > 0 { pause = min(pause, 60) }
            try? await Task.sleep(for: .seconds(pause))
        }
    }

    enum SweepOutcome: Equatable {
        /// Read and resolved; this many missed deliveries were asked for.
        case swept(Int)
        /// GitHub's rate limit: not before then.
        case wait(until: Double)
        case failed
        /// Stopped because the lead may have gone (`LeaderFence`): nothing to say, the next
        /// leader sweeps.
        case withheld
    }

    /// One sweep of one hook.
    func sweep(_ hook: GitHubAPISettings.Hook, pacing: inout Pacing) async -> SweepOutcome {
        let started = now()
        let name = hook.description
        let examined = await ledger.examinedThrough(hook: name)
        var log: [HookDelivery] = []
        var cursor: String?
        do {
            repeat {
                let page = try await client.deliveries(of: hook, cursor: cursor)
                log += page.deliveries
                if page.unreadable > 0 {
                    logger.warning(
                        "GitHub's delivery log had entries the bridge could not read; they are skipped",
                        ["github.hook": .string(name), "count": .number(Double(page.unreadable))])
                }
                cursor = page.nextCursor
                guard let oldest = page.deliveries.map(\.deliveredAt).min(),
                    !RedeliveryPlan.hasReadEnough(
                        oldest: oldest, examinedThrough: examined, sweptAt: started,
                        retention: settings.deliveryRetention)
                else { break }
            } while cursor != nil
        } catch {
            return failed(error, hook: name)
        }
        let guids = Set(log.lazy.filter { RedeliveryPlan.events.contains($0.event) }.map(\.guid))
        guard let state = await ledger.state(guids: guids) else { return .failed }
        let plan = RedeliveryPlan(
            log: log, stored: state.stored, requested: state.requested, sweptAt: started,
            retention: settings.deliveryRetention)
        if !plan.givenUp.isEmpty { await ledger.recordGivenUp(plan.givenUp, at: started) }
        for delivery in plan.givenUp {
            logger.error(
                "asked GitHub to redeliver this delivery the most times allowed and it never arrived; not asked for again",
                [
                    "github.hook": .string(name), "github.delivery": .string(delivery.guid),
                    "github.event": .string(delivery.event),
                    "github.redelivery_requests": .number(Double(RedeliveryPlan.maxRequests)),
                ])
        }
        var asked = 0
        for delivery in plan.redeliver {
            let wait = pacing.delay(at: now())
            if wait > 0 { try? await Task.sleep(for: .seconds(wait)) }
            if Task.isCancelled { break }
            guard await ledger.recordRecoveryRequest(delivery, hook: name, at: now()) else { break }
            pacing.spend(at: now())
            do {
                try await client.redeliver(delivery.id, of: hook)
                asked += 1
                metrics.add("github_redeliveries_total", labels: ["outcome": "requested"])
                logger.info(
                    "asked GitHub to redeliver a delivery the bridge never received",
                    [
                        "github.hook": .string(name), "github.delivery": .string(delivery.guid),
                        "github.event": .string(delivery.event),
                        "github.delivered_at": .string(GitHubTimestamp.format(delivery.deliveredAt)),
                    ])
            } catch {
                if case .withheld = error { return .withheld }
                metrics.add("github_redeliveries_total", labels: ["outcome": "failed"])
                return failed(error, hook: name)
            }
        }
        await ledger.recordSweep(hook: name, examinedThrough: plan.examinedThrough, at: started)
        metrics.add("github_sweeps_total", labels: ["outcome": "ok"])
        let limit = await client.rateLimit
        board.update { standing in
            standing.redeliveriesRequested += asked
            standing.givenUp += plan.givenUp.count
            standing.rateLimitRemaining = limit?.remaining
            standing.rateLimitLimit = limit?.limit
        }
        unblocked()
        logger.debug(
            "swept a hook's delivery log",
            ["github.hook": .string(name), "read": .number(Double(log.count)), "asked": .number(Double(asked))])
        return .swept(asked)
    }

    /// Why a sweep stopped, said once per distinct reason with what to fix (`blocked`).
    private func failed(_ failure: GitHubAPIClient.Failure, hook: String) -> SweepOutcome {
        if case .withheld = failure { return .withheld }
        metrics.add("github_sweeps_total", labels: ["outcome": "failed"])
        let hint: String
        switch failure {
        case .rateLimited: hint = "the sweep waits for the reset"
        case .unauthorized: hint = Self.credentialHint
        case .forbidden, .notFound:
            hint =
                "the credential cannot read this hook's deliveries: a token needs admin:repo_hook (or the "
                + "repository's Webhooks: read and write permission), an App the Webhooks permission; check the hook id"
        case .refused, .failed, .withheld: hint = "the sweep runs again at the next interval"
        }
        blocked(by: failure, hint: hint, ["github.hook": .string(hook)])
        if case .rateLimited(let until) = failure { return .wait(until: until) }
        return .failed
    }

    /// At most `perMinute` requests a minute, evenly spaced, so a backlog after an outage does not
    /// arrive as one burst.
    struct Pacing {
        let interval: Double
        var last: Double = -.infinity

        init(perMinute: Int) {
            interval = 60 / Double(max(1, perMinute))
        }

        func delay(at now: Double) -> Double { max(0, last + interval - now) }
        mutating func spend(at now: Double) { last = now }
    }
}
