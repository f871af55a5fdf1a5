import BridgeCore
import BridgeStore

/// The engine as the configuration runs it: the one place where the configuration meets the state
/// the store holds, before a service is built on it (`Daemon`) and whenever the service reads the
/// store again (after a failed commit, on taking the lead). The service takes the engine complete
/// and never patches settings into it.
///
/// What the store does not carry comes from the configuration: the alert rules, the buttons, the
/// widgets, the routing, the configured key (whose fingerprint decides whether a recorded target
/// refusal still holds) and the request pacer.
public struct EngineLoader: Sendable {
    public let configuration: BridgeConfiguration

    public init(configuration: BridgeConfiguration) {
        self.configuration = configuration
    }

    /// An engine holding no runs yet: a follower's, which reads the store when it takes the lead.
    public func empty() -> BridgeEngine {
        complete(BridgeEngine(configuration: configuration.engineConfiguration))
    }

    /// The engine as the store left it at `now`. `filter`: the filters in force (a SIGHUP may have
    /// replaced the configured ones). `pacer`: the current window's requests, which were sent all
    /// the same and stay counted across a reload.
    public func load(
        from database: BridgeDatabase, filter: DeliveryFilter? = nil, pacer: RequestPacer? = nil, at now: UnixTime
    ) throws -> BridgeEngine {
        let engineConfiguration = configuration.engineConfiguration
        var loaded = try database.loadEngine(
            configuration: filter.map(engineConfiguration.replacing(filter:)) ?? engineConfiguration, at: now)
        loaded.pacer = pacer
        return complete(loaded)
    }

    /// `engine` with what its configuration does not carry, after the store's state is in: the
    /// key's fingerprint is compared with the refusal the store recorded (a refusal for another key
    /// is a change to write), and the pacer.
    private func complete(_ engine: BridgeEngine) -> BridgeEngine {
        var engine = engine
        engine.useKey(fingerprint: configuration.apiKey.map(BridgeEngine.fingerprint(ofKey:)))
        // Paced only when requests reach PushWard: dry-run (no key) sends nothing to count.
        if configuration.apiKey != nil { engine.pacer = engine.pacer ?? RequestPacer(settings: configuration.pacing) }
        return engine
    }
}
