import BridgeCore
import Foundation
import Testing

/// How long GitHub keeps a hook's deliveries, by the kind of API `github.api.url` names: 3 days on
/// GitHub.com and GHE.com, 7 on an Enterprise Server; and the redelivery plan held to it.
@Suite("delivery retention")
struct DeliveryRetentionTests {
    static let now: UnixTime = 1_800_000_000

    @Test(
        "GitHub.com and GHE.com's data residency hosts keep 3 days",
        arguments: [
            "https://api.github.com", "https://api.github.com/", "HTTPS://API.GITHUB.COM", "https://api.github.com.",
            "https://api.github.com:443", "https://user@api.github.com/", "https://api.octocorp.ghe.com",
            "https://api.octo-corp.ghe.com/", "https://API.Acme.GHE.com:443",
        ])
    func cloud(url: String) {
        #expect(!GitHubAPISettings.isEnterpriseServer(apiURL: url))
        var settings = GitHubAPISettings()
        settings.url = url
        #expect(settings.deliveryRetention == 3 * 86_400)
    }

    @Test(
        "any other host is an Enterprise Server's and keeps 7 days",
        arguments: [
            "https://ghe.example.com/api/v3", "https://github.example.com/api/v3", "http://127.0.0.1:8080",
            "https://[::1]:8443/api/v3", "https://api.github.com.evil.example/api/v3",
            "https://api.github.com@ghe.example.com/api/v3", "https://ghe.com", "https://api.ghe.com",
            "https://api..ghe.com", "https://www.acme.ghe.com", "https://api.a.b.ghe.com",
            "https://github.com/api/v3", "https://api.github.co", "",
            "https://\u{202E}api.github.com", "https://api.github.com\u{0}.evil", "https://😀.ghe.com",
            "https://" + String(repeating: "a.", count: 5_000) + "ghe.com",
        ])
    func enterpriseServer(url: String) {
        #expect(GitHubAPISettings.isEnterpriseServer(apiURL: url))
        var settings = GitHubAPISettings()
        settings.url = url
        #expect(settings.deliveryRetention == 7 * 86_400)
    }

    @Test("the default URL is GitHub.com's, 3 days")
    func defaultURL() {
        #expect(GitHubAPISettings().deliveryRetention == RedeliveryPlan.githubRetention)
    }

    static func entry(_ id: Int, _ guid: String, daysAgo: Double) -> HookDelivery {
        HookDelivery(
            id: id, guid: guid, deliveredAt: now - daysAgo * 86_400, redelivery: false, statusCode: 0,
            event: "workflow_job", action: "completed")
    }

    @Test("with 7 days, a delivery 5 days old is asked for and one 8 days old is not; with 3, neither")
    func planHonoursRetention() {
        let log = [
            Self.entry(1, "eight", daysAgo: 8), Self.entry(2, "five", daysAgo: 5), Self.entry(3, "one", daysAgo: 1),
        ]
        let enterprise = RedeliveryPlan(
            log: log, stored: [], requested: [:], sweptAt: Self.now, retention: RedeliveryPlan.enterpriseServerRetention
        )
        #expect(enterprise.redeliver.map(\.guid) == ["five", "one"])
        let cloud = RedeliveryPlan(
            log: log, stored: [], requested: [:], sweptAt: Self.now, retention: RedeliveryPlan.githubRetention)
        #expect(cloud.redeliver.map(\.guid) == ["one"])
    }

    @Test("the sweep reads on past 3 days when 7 are kept, and stops at the edge of what is kept")
    func readsAsFarAsKept() {
        let fiveDays = Self.now - 5 * 86_400
        #expect(
            !RedeliveryPlan.hasReadEnough(
                oldest: fiveDays, examinedThrough: nil, sweptAt: Self.now,
                retention: RedeliveryPlan.enterpriseServerRetention))
        #expect(
            RedeliveryPlan.hasReadEnough(
                oldest: fiveDays, examinedThrough: nil, sweptAt: Self.now, retention: RedeliveryPlan.githubRetention))
        #expect(
            RedeliveryPlan.hasReadEnough(
                oldest: Self.now - 7 * 86_400, examinedThrough: nil, sweptAt: Self.now,
                retention: RedeliveryPlan.enterpriseServerRetention))
    }
}
