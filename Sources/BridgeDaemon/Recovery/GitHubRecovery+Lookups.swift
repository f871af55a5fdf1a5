import BridgeCore
import Foundation
import GitHubClient

/// Lookups: asks GitHub's API about runs that went quiet: a run in progress with no delivery for
/// `stale_after` is read (`GET …/runs/{id}/attempts/{n}` and its jobs) and the answer fed to the
/// core as the deliveries GitHub would have sent (`APIObservation`), through the same ingest as
/// webhooks, recorded with hook id `github-api`. A run whose `completed` delivery was lost so ends
/// with GitHub's conclusion and times; one that goes on (a job waiting for a runner) starts its
/// quiet period again. A lookup that fails leaves the run to `completion_grace`'s guess.
extension GitHubRecovery {
    /// Runs looked up per round: each costs two requests of the hourly allowance.
    static let lookupsPerRound = 20

    /// The lookups, until cancelled.
    func lookUpQuietRunsUntilCancelled() async {
        let interval = GitHubAPISettings.lookupInterval(settings.staleAfter)
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(interval))
            // The leader looks runs up: a follower's engine is not the one that applies the answer.
            guard client.fence.permits() else { continue }
            let quiet = await ledger.quietRuns(
                quietFor: Double(settings.staleAfter), at: now(), limit: Self.lookupsPerRound)
            for key in quiet {
                if Task.isCancelled { return }
                guard await lookUp(key) else { break }
            }
        }
    }

    /// Looks one run up; false when the round stops there (GitHub's rate limit, a refused
    /// credential: the next run would fail the same way).
    func lookUp(_ key: RunKey) async -> Bool {
        let run: JSONValue
        let jobs: JSONValue
        do {
            run = try await client.run(repository: key.repository, id: key.runID, attempt: key.attempt)
            jobs = try await client.jobs(repository: key.repository, runID: key.runID, attempt: key.attempt)
        } catch {
            // The lead may have gone: the round stops here, quietly; the next leader looks it up.
            if case .withheld = error { return false }
            metrics.add("github_run_lookups_total", labels: ["outcome": "failed"])
            let run: [String: JSONValue] = [
                "github.repository": .string(key.repository), "run.id": .number(Double(key.runID)),
            ]
            switch error {
            case .rateLimited:
                blocked(by: error, hint: "lookups wait for the reset", run)
                return false
            case .unauthorized:
                blocked(by: error, hint: Self.credentialHint, run)
                return false
            default:
                logger.warning(
                    "could not look a quiet run up on GitHub; completion_grace decides if it never speaks again",
                    [
                        "github.repository": .string(key.repository), "run.id": .number(Double(key.runID)),
                        "error": .string(error.description),
                    ])
                return true
            }
        }
        unblocked()
        guard let observations = APIObservation.observations(run: run, jobs: jobs) else {
            metrics.add("github_run_lookups_total", labels: ["outcome": "unreadable"])
            logger.warning(
                "GitHub's answer for a quiet run lacks its id, status or repository; completion_grace decides",
                ["github.repository": .string(key.repository), "run.id": .number(Double(key.runID))])
            return true
        }
        let at = now()
        let deliveries = observations.map {
            IncomingDelivery(
                id: $0.id, event: $0.event, hookID: APIObservation.hookID, contentType: "application/json",
                body: $0.body,
                receivedAt: at)
        }
        let results = await service.ingest(deliveries)
        let applied = results.filter { $0.status == 202 }.count
        board.update { $0.runsLookedUp += 1 }
        // A no-op when the answer changed the run (its quiet period started with that change).
        await ledger.heardFromAPI(key, at: at)
        if applied == 0 {
            metrics.add("github_run_lookups_total", labels: ["outcome": "unchanged"])
            return true
        }
        metrics.add("github_run_lookups_total", labels: ["outcome": "applied"])
        logger.notice(
            "a quiet run was read from GitHub's API and brought up to date",
            [
                "github.repository": .string(key.repository), "run.id": .number(Double(key.runID)),
                "run.attempt": .number(Double(key.attempt)), "applied": .number(Double(applied)),
                "github.status": .string(run["status"]?.stringValue ?? ""),
            ])
        return true
    }
}
