/// What the service tells the rest of the process: its log, its counters, and the signals that
/// wake the dispatcher. Each is safe to use from any thread.
struct ServiceOutlets: Sendable {
    let logger: Logger
    let metrics: Metrics
    /// The lines of signed deliveries that are malformed or ignored: one a second of each, the rest
    /// counted, since a sender holding the secret (or replaying what it captured under new ids)
    /// decides how many it sends. Each is also recorded with its reason in `deliveries`.
    let deliveryLog: RefusalLog
    /// Signalled whenever a delivery changed a card, so the dispatcher looks at once.
    let wakeups = WakeupSignal()
    /// Signalled when PushWard said the quota is spent: the budget is read again at once.
    let usageRefresh = WakeupSignal()

    init(logger: Logger, metrics: Metrics) {
        self.logger = logger
        self.metrics = metrics
        deliveryLog = RefusalLog(logger: logger, counters: metrics, kinds: ["malformed_payload", "ignored_delivery"])
    }
}
