/// What the service tells the rest of the process: its log, its counters, and the signals that
/// wake the dispatcher. Each is safe to use from any thread.
struct ServiceOutlets: Sendable {
    let logger: Logger
    let metrics: Metrics
    /// Signalled whenever a delivery changed a card, so the dispatcher looks at once.
    let wakeups = WakeupSignal()
    /// Signalled when PushWard said the quota is spent: the budget is read again at once.
    let usageRefresh = WakeupSignal()

    init(logger: Logger, metrics: Metrics) {
        self.logger = logger
        self.metrics = metrics
    }
}
