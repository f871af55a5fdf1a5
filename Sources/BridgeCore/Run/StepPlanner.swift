/// Folds a run's jobs, its previous attempt and its seed from history into the steps of the card.
public enum StepPlanner {
    public static func plan(for run: RunState) -> StepPlan {
        var byName: [String: [JobRecord]] = [:]
        for job in run.workflowJobs { byName[JobGroupName.baseName(of: job.name), default: []].append(job) }
        let inherited = Dictionary(run.inherited.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

        var groups: [StepGroup] = byName.map { name, jobs in
            StepGroup(
                name: name, origin: .live, jobs: jobs, expectedJobCount: jobs.count, estimate: run.estimates[name],
                orderKey: inherited[name]?.orderKey ?? jobs[0].id)
        }
        for earlier in run.inherited where byName[earlier.name] == nil {
            groups.append(
                StepGroup(
                    name: earlier.name, origin: .inherited, jobs: [], expectedJobCount: max(1, earlier.jobCount),
                    completedEarlier: earlier.succeeded, estimate: run.estimates[earlier.name],
                    orderKey: earlier.orderKey))
        }
        groups.sort { ($0.orderKey, $0.name) < ($1.orderKey, $1.name) }
        if let seed = run.seed { insertSeeded(seed, into: &groups, estimates: run.estimates) }
        return StepPlan(groups: foldOverflow(groups))
    }

    /// Puts each step of the seed run that this run has not shown yet right after the step that
    /// preceded it in the seed, so the card has its final length from the first frame.
    static func insertSeeded(_ seed: RunSummary, into groups: inout [StepGroup], estimates: [String: Double]) {
        var present = Set(groups.map(\.name))
        var previousName: String?
        for summary in seed.groups {
            defer { previousName = summary.name }
            guard !present.contains(summary.name) else { continue }
            let position = previousName.flatMap { name in groups.firstIndex { $0.name == name } }.map { $0 + 1 } ?? 0
            let orderKey = position > 0 ? groups[position - 1].orderKey : (groups.first?.orderKey ?? 0)
            groups.insert(
                StepGroup(
                    name: summary.name, origin: .seeded, jobs: [], expectedJobCount: max(1, summary.jobCount),
                    estimate: estimates[summary.name], orderKey: orderKey),
                at: position)
            present.insert(summary.name)
        }
    }

    /// Beyond 64 steps, the 64th stands for all the rest, so nothing is dropped from progress.
    static func foldOverflow(_ groups: [StepGroup]) -> [StepGroup] {
        guard groups.count > StepPlan.maximumSteps else { return groups }
        let kept = groups.prefix(StepPlan.maximumSteps - 1)
        let rest = groups.dropFirst(StepPlan.maximumSteps - 1)
        let estimates = rest.compactMap(\.estimate)
        let folded = StepGroup(
            name: "+\(rest.count) more", origin: rest.contains { $0.origin == .live } ? .live : .seeded,
            jobs: rest.flatMap(\.jobs).sorted { $0.id < $1.id },
            expectedJobCount: rest.reduce(0) { $0 + $1.totalJobCount },
            completedEarlier: rest.allSatisfy { $0.jobs.isEmpty ? $0.completedEarlier : true },
            estimate: estimates.isEmpty ? nil : estimates.reduce(0, +), orderKey: rest.first?.orderKey ?? 0)
        return Array(kept) + [folded]
    }
}
