import BridgeCore
import Testing

@testable import BridgeDaemon

/// The status page's line about the pacer: there while requests wait for room, gone after.
@Suite("Pacer notice")
struct PacerNoticeTests {
    @Test("said while the pacer holds requests back, with the window's use and the configured limit")
    func notice() throws {
        var engine = BridgeEngine()
        engine.pacer = RequestPacer(settings: .init(limit: 2, window: 60))
        #expect(ServiceSnapshot(engine: engine, inFlight: 0).pacerNotice(at: 10) == nil, "nothing waits")
        _ = engine.admitPaced(.ending, at: 0)
        _ = engine.admitPaced(.ending, at: 1)
        _ = engine.admitPaced(.updating, at: 2)
        let text = try #require(ServiceSnapshot(engine: engine, inFlight: 0).pacerNotice(at: 2))
        #expect(text.contains("2 of 2 in the last minute") && text.contains("pushward.requests_per_minute"), "\(text)")
        engine.pacer?.beginTurn()
        #expect(ServiceSnapshot(engine: engine, inFlight: 0).pacerNotice(at: 70) == nil)
        #expect(ServiceSnapshot(engine: BridgeEngine(), inFlight: 0).pacerNotice(at: 0) == nil, "no pacer, no line")
    }
}
