import BridgeCore
import Foundation

/// What the service is built with and never changes: the configuration, this instance's name, and
/// what follows from the configuration that the dispatcher and the daemon ask on every turn
/// without entering the service's queue.
public struct ServiceSettings: Sendable {
    public let configuration: BridgeConfiguration
    /// This instance's name, kept with each press it records so that at its next start it marks
    /// only its own cut-off presses `interrupted` (`Daemon.instanceName`).
    public let instance: String
    /// Whether the configuration has alerts at all (rules, or buttons whose refusals alert).
    public let sendsAlerts: Bool
    /// Whether requests may carry buttons whose tokens are minted as they go out (`actions`).
    public let sendsButtons: Bool
    /// Whether home-screen widgets are configured: the dispatcher asks for their requests.
    public let sendsWidgets: Bool
    /// Whether requests are paced (`RequestPacer`): they are when an API key sends them to
    /// PushWard. Without, a read need not queue on the service to be admitted.
    public let pacesRequests: Bool

    public init(configuration: BridgeConfiguration, instance: String) {
        self.configuration = configuration
        self.instance = instance
        sendsAlerts = configuration.sendsNotifications
        sendsButtons = configuration.actions != nil
        sendsWidgets = !configuration.widgets.isEmpty
        pacesRequests = configuration.apiKey != nil
    }

    /// Builds the service's engine from this configuration (`EngineLoader`).
    var loader: EngineLoader { EngineLoader(configuration: configuration) }
}
