import BridgeCore
import Foundation

/// The daemon's counters and histograms, rendered in the Prometheus text format on `/metrics`.
///
/// A lock is enough: an increment is nanoseconds next to a database commit or an HTTP request.
/// Names are unprefixed here; `prometheusText` adds `pushward_bridge_`.
public final class Metrics: @unchecked Sendable {
    /// A metric name with its labels, sorted so the same labels always make the same series.
    struct Series: Hashable {
        var name: String
        var labels: [String]

        init(_ name: String, _ labels: [String: String]) {
            self.name = name
            switch labels.count {
            case 0:
                self.labels = []
            case 1:
                // The common case (a status, a kind): no sort, no array of keys.
                let (key, value) = labels.first!
                self.labels = [key + "=\"" + Metrics.escape(value) + "\""]
            default:
                self.labels = labels.keys.sorted().map { $0 + "=\"" + Metrics.escape(labels[$0] ?? "") + "\"" }
            }
        }

        var labelText: String { labels.isEmpty ? "" : "{" + labels.joined(separator: ",") + "}" }
    }

    struct Histogram {
        var buckets: [Double]
        var counts: [Int]
        var sum: Double = 0
        var count = 0
    }

    /// Seconds: from 1 ms to 10 s, where webhook acks and PushWard requests fall.
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

    private let lock = NSLock()
    private var counters: [Series: Double] = [:]
    private var histograms: [Series: Histogram] = [:]
    private var help: [String: (type: String, text: String)] = [:]

    public init() {
        describe("deliveries_total", "counter", "Webhook deliveries by event and outcome.")
        describe(
            "wal_restarts_total", "counter",
            "Times the WAL was made to start over (every walSizeLimit bytes written), handovers included.")
        describe(
            "wal_handovers_total", "counter",
            "WAL restarts the writer did itself between two transactions, without a checkpoint taking its lock.")
        describe(
            "wal_database_syncs_total", "counter",
            "Syncs of the database file by the checkpointer after copying WAL frames, off the writer's path.")
        describe(
            "signature_failures_total", "counter", "Deliveries refused because X-Hub-Signature-256 did not verify.")
        describe("http_responses_total", "counter", "Webhook listener answers by status.")
        describe(
            "log_lines_suppressed_total", "counter",
            "Log lines of refused requests folded by the rate limit (one line a second of each kind), by kind.")
        describe(
            "unverified_body_budget_refusals_total", "counter",
            "Requests answered 503 because bodies not yet verified held the whole body budget.")
        describe(
            "request_deadline_closes_total", "counter",
            "Webhook connections closed because their request had not arrived within github.request_deadline.")
        describe("ack_latency_seconds", "histogram", "From a webhook request's arrival to its answer.")
        describe("ingest_batch_size", "histogram", "Deliveries committed together in one transaction (group commit).")
        describe(
            "deliveries_applied_total", "counter",
            "Deliveries the leader applied after an instance committed them (several instances on PostgreSQL).")
        describe("pushward_requests_total", "counter", "Requests to PushWard by kind and status (none: no answer).")
        describe("pushward_retries_total", "counter", "Requests that failed and will be retried.")
        describe("pushward_request_latency_seconds", "histogram", "PushWard request round trips.")
        describe("github_api_requests_total", "counter", "Requests to GitHub's REST API (github.api) by outcome.")
        describe("github_sweeps_total", "counter", "Sweeps of a hook's delivery log, by outcome.")
        describe("github_redeliveries_total", "counter", "Redeliveries asked of GitHub, by outcome.")
        describe("github_run_lookups_total", "counter", "Quiet runs read from GitHub's API, by outcome.")
    }

    /// The `event` label of a delivery: the events the bridge reads by name, every other one as
    /// `other`. The header is the sender's to choose, so its value never becomes a series of its
    /// own: a sender cycling through names would grow `/metrics` without bound.
    public static func eventLabel(_ event: String) -> String {
        switch event {
        case "workflow_run", "workflow_job", "ping": event
        default: "other"
        }
    }

    /// Adds what the pacer held back since the last count to `pushward_requests_paced_total`.
    func countPacerHeld(of engine: inout BridgeEngine) {
        for (tier, count) in engine.takePacerHeld() where count > 0 {
            add("pushward_requests_paced_total", Double(count), labels: ["tier": tier.label])
        }
    }

    /// Counts a group's answers in `deliveries_total` by event and outcome, once per kind: a
    /// labelled series costs a lookup under a lock.
    func countAnswers(_ deliveries: [IncomingDelivery], _ results: [IngestResult]) {
        var counts: [[String]: Int] = [:]
        for (delivery, result) in zip(deliveries, results) {
            let outcome = result.body["status"]?.stringValue ?? result.body["error"]?.stringValue ?? "unknown"
            counts[[Self.eventLabel(delivery.event), outcome], default: 0] += 1
        }
        for (kind, count) in counts {
            add("deliveries_total", Double(count), labels: ["event": kind[0], "outcome": kind[1]])
        }
    }

    public func describe(_ name: String, _ type: String, _ text: String) {
        lock.lock()
        help[name] = (type, text)
        lock.unlock()
    }

    public func add(_ name: String, _ amount: Double = 1, labels: [String: String] = [:]) {
        let series = Series(name, labels)
        lock.lock()
        counters[series, default: 0] += amount
        lock.unlock()
    }

    /// Deliveries per transaction: 1 when idle, up to the ingest queue's limit under load.
    public static let batchBuckets: [Double] = [1, 2, 4, 8, 16, 32, 64]

    /// Adds `value` to a histogram; `buckets` counts only when the series is first observed.
    public func observe(
        _ name: String, _ value: Double, labels: [String: String] = [:], buckets: [Double] = Metrics.latencyBuckets
    ) {
        let series = Series(name, labels)
        lock.lock()
        var histogram =
            histograms[series] ?? Histogram(buckets: buckets, counts: Array(repeating: 0, count: buckets.count))
        for (index, bound) in histogram.buckets.enumerated() where value <= bound { histogram.counts[index] += 1 }
        histogram.sum += value
        histogram.count += 1
        histograms[series] = histogram
        lock.unlock()
    }

    /// The value of an unlabelled counter, or the sum over all its label sets.
    public func value(_ name: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return Int(counters.filter { $0.key.name == name }.values.reduce(0, +))
    }

    /// How many values a histogram holds and their sum, over all its label sets.
    public func observations(_ name: String) -> (count: Int, sum: Double) {
        lock.lock()
        defer { lock.unlock() }
        let matching = histograms.filter { $0.key.name == name }.values
        return (matching.reduce(0) { $0 + $1.count }, matching.reduce(0) { $0 + $1.sum })
    }

    /// The exposition: every counter and histogram, plus `gauges` computed at scrape time.
    public func prometheusText(gauges: [(name: String, help: String, labels: [String: String], value: Double)])
        -> String
    {
        lock.lock()
        let counters = self.counters
        let histograms = self.histograms
        let help = self.help
        lock.unlock()
        var text = ""
        var described: Set<String> = []
        func header(_ name: String, _ type: String, _ fallback: String) {
            guard described.insert(name).inserted else { return }
            text += "# HELP pushward_bridge_\(name) \(help[name]?.text ?? fallback)\n"
            text += "# TYPE pushward_bridge_\(name) \(help[name]?.type ?? type)\n"
        }
        for (series, value) in counters.sorted(by: { ($0.key.name, $0.key.labelText) < ($1.key.name, $1.key.labelText) }
        ) {
            header(series.name, "counter", series.name)
            text += "pushward_bridge_\(series.name)\(series.labelText) \(Self.number(value))\n"
        }
        for (series, histogram) in histograms.sorted(by: {
            ($0.key.name, $0.key.labelText) < ($1.key.name, $1.key.labelText)
        }) {
            header(series.name, "histogram", series.name)
            for (bound, count) in zip(histogram.buckets, histogram.counts) {
                let labels = series.labels + ["le=\"\(Self.number(bound))\""]
                text += "pushward_bridge_\(series.name)_bucket{\(labels.joined(separator: ","))} \(count)\n"
            }
            let infinity = series.labels + ["le=\"+Inf\""]
            text += "pushward_bridge_\(series.name)_bucket{\(infinity.joined(separator: ","))} \(histogram.count)\n"
            text += "pushward_bridge_\(series.name)_sum\(series.labelText) \(Self.number(histogram.sum))\n"
            text += "pushward_bridge_\(series.name)_count\(series.labelText) \(histogram.count)\n"
        }
        for gauge in gauges {
            header(gauge.name, "gauge", gauge.help)
            text +=
                "pushward_bridge_\(gauge.name)\(Series(gauge.name, gauge.labels).labelText) \(Self.number(gauge.value))\n"
        }
        return text
    }

    static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }

    /// A label value as the exposition format wants it. Most values (statuses, event names) need
    /// nothing, and this runs for every answer on the store's queue: check before rewriting.
    static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == 0x0A })
        else { return text }
        return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
