import BridgeCore

extension ActivitySettings {
    /// Settings that push every visible change as it happens (level `full`, no coalescing, no
    /// hourly cap in practice): the behaviour the tests of what a card shows are written against,
    /// so that they test the content, and the push economy is tested on its own.
    public static var pushingEveryChange: ActivitySettings {
        var settings = ActivitySettings()
        settings.fidelity = .full
        settings.coalesce = 0
        settings.maxUpdatesPerHour = 3_600
        return settings
    }
}
