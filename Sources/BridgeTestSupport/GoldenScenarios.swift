import BridgeCore

/// The scripted runs behind the golden request streams (`Tests/BridgeCoreTests/Fixtures/golden`),
/// shared so other suites can check that another path (the daemon's store) sends the same.
public enum GoldenScenarios {
    static let script = RunScript()

    public static let all: [String: @Sendable () -> [WebhookEvent]] = [
        "linear-success": {
            script.deliveries(waves: [
                [RunScript.Job("lint", duration: 20)], [RunScript.Job("build", duration: 60)],
                [RunScript.Job("deploy", duration: 30)],
            ])
        },
        "matrix-failure": {
            script.deliveries(waves: [
                [RunScript.Job("build", duration: 40)],
                (1...12).map {
                    RunScript.Job(
                        "test (shard-\($0))", duration: Double(10 + $0), conclusion: $0 == 5 ? "failure" : "success")
                },
            ])
        },
        "seeded-second-run": {
            let second = RunScript(runID: 9_001, runNumber: 43, start: script.start + 3_600, firstJobID: 60_000)
            let waves: [[RunScript.Job]] = [
                [RunScript.Job("lint", duration: 20)],
                [
                    RunScript.Job("call / build (linux)", duration: 60),
                    RunScript.Job("call / build (mac)", duration: 90),
                ],
                [RunScript.Job("deploy", duration: 30)],
            ]
            return script.deliveries(waves: waves) + second.deliveries(waves: waves)
        },
        "approval-then-cancel": {
            [
                script.run("requested", at: 0),
                script.job(50_000, "build", "in_progress", createdAt: 1, startedAt: 2),
                script.job(
                    50_000, "build", "completed", createdAt: 1, startedAt: 2, completedAt: 30, conclusion: "success"),
                script.job(50_001, "deploy", "waiting", createdAt: 31, environment: "production"),
                script.job(50_001, "deploy", "completed", createdAt: 31, completedAt: 300, conclusion: "cancelled"),
                script.run("completed", at: 301, conclusion: "cancelled"),
            ]
        },
        "lost-completion": {
            script.deliveries(
                waves: [[RunScript.Job("build", duration: 30)], [RunScript.Job("test", duration: 30)]], complete: false)
        },
    ]
}
