import BridgeCore
import Foundation

extension FuzzCheck {
    /// At most this many deliveries per input, so one input cannot take seconds.
    static let maximumIngestDeliveries = 48

    /// The whole pure ingest path on a sequence of deliveries: decode, the engine, the reconciler
    /// and the simulated clock exactly as `render` runs them (`BridgeHarness`), with every request
    /// the bridge plans checked by `ContractValidator` against what the server would hold. Whatever
    /// GitHub sends — huge names, combining marks, control characters, absurd numbers — the bridge
    /// must only ever send requests PushWard accepts, or the Live Activity stops updating.
    ///
    /// Input: deliveries separated by NUL bytes (a JSON body never contains one). Each is the
    /// `X-GitHub-Event` name, a newline, and the JSON body; one without a newline is a
    /// `workflow_job` body. Deliveries that do not decode are skipped, as the daemon rejects them.
    ///
    /// Each sequence is played three times: under the daemon's default settings (the push economy
    /// coalesces and caps what is sent), pushing every change, so every frame the engine can build
    /// is sent and checked, and as one bar (the generic template) with a widget that follows every
    /// run, whose requests are held to the `progress` template as well.
    public static func ingest(_ input: [UInt8]) throws(FuzzFinding) {
        let events = ingestEvents(input)
        var generic = ActivitySettings.pushingEveryChange
        generic.template = .generic
        for (label, settings, widgets) in [
            ("default settings", ActivitySettings(), []), ("every change", ActivitySettings.pushingEveryChange, []),
            ("generic with a widget", generic, [WidgetSettings(slug: "all", name: "All runs")]),
        ] {
            var harness = BridgeHarness(settings: settings, widgets: widgets)
            harness.play(events)
            if let (request, violations) = harness.widgetViolations.first {
                throw FuzzFinding(
                    "\(label): \(request.method.rawValue) \(request.path) breaks the widget contract "
                        + "(\(violations.map(\.description).joined(separator: "; "))): "
                        + String(request.body.canonicalString.prefix(2_000)))
            }
            for entry in harness.server.log where !entry.violations.isEmpty {
                let request = entry.request
                throw FuzzFinding(
                    "\(label): \(request.method.rawValue) \(request.path) at \(entry.at) breaks the contract "
                        + "(\(entry.violations.map(\.description).joined(separator: "; "))): "
                        + String(request.body.canonicalString.prefix(2_000)))
            }
        }
    }

    /// The deliveries of an ingest input that decode.
    static func ingestEvents(_ input: [UInt8]) -> [WebhookEvent] {
        var events: [WebhookEvent] = []
        for chunk in input.split(separator: 0, omittingEmptySubsequences: true).prefix(maximumIngestDeliveries) {
            let event: String
            let body: ArraySlice<UInt8>
            if let newline = chunk.firstIndex(of: UInt8(ascii: "\n")) {
                event = String(decoding: chunk[..<newline], as: UTF8.self)
                body = chunk[(newline + 1)...]
            } else {
                event = "workflow_job"
                body = chunk
            }
            if let decoded = try? WebhookDecoder.decode(
                event: event, body: Data(body), contentType: "application/json")
            {
                events.append(decoded)
            }
        }
        return events
    }
}
