/// When a recorded delivery happened, read from its payload: `render` drives its clock with these.
public enum PayloadTime {
    /// The latest moment the payload describes: a completed job's completion, a started job's
    /// start, a run's last update; nil for events that carry no time.
    public static func of(_ event: WebhookEvent) -> UnixTime? {
        switch event {
        case .workflowJob(let delivery):
            let job = delivery.job
            return [job.completedAt, job.startedAt, job.createdAt].compactMap { $0 }.max()
        case .workflowRun(let delivery):
            let run = delivery.run
            return [run.updatedAt, run.runStartedAt, run.createdAt].compactMap { $0 }.max()
        case .ping, .unsupported:
            return nil
        }
    }
}
