// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "pushward-bridge",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "pushward-bridge", targets: ["pushward-bridge"]),
        .executable(name: "dispatch-bench", targets: ["dispatch-bench"]),
    ],
    targets: [
        // Pure: GitHub event models, run state, step plan, activity content, reconciler, config values.
        // Imports Foundation only (LayeringTests checks): JSON is read with Foundation's decoders.
        .target(name: "BridgeCore"),
        // Test doubles and the contract validator, shared by every test target.
        .target(name: "BridgeTestSupport", dependencies: ["BridgeCore", "WebhookServer", "COpenSSL"]),
        // libsqlite3 through a system-library target: module.modulemap + shim.h.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // LZ4: the raw payloads the store keeps are compressed.
        .systemLibrary(name: "CLZ4", providers: [.apt(["liblz4-dev"])]),
        // libpq, the PostgreSQL client: the shared engine for several instances.
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),
        // SQLite and PostgreSQL: connections, migrations, the store actor.
        .target(name: "BridgeStore", dependencies: ["BridgeCore", "CSQLite", "CLZ4", "CLibPQ"]),
        // libmicrohttpd (HTTP server) and libcrypto (HMAC-SHA256): module.modulemap + shim.h each.
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        // The libmicrohttpd wrapper, request limits and the webhook signature check.
        .target(name: "WebhookServer", dependencies: ["BridgeCore", "CMicroHTTPD", "COpenSSL"]),
        // What every outgoing HTTP client shares (FoundationNetworking): a data task that survives
        // cancellation on Linux, and redirects refused so credentials stay with the configured host.
        .target(name: "HTTPClientSupport"),
        // The PushWard REST client: requests, problem bodies.
        .target(name: "PushWardClient", dependencies: ["BridgeCore", "HTTPClientSupport"]),
        // The GitHub REST client for recovery: App JWTs (libcrypto), installation tokens, ETags,
        // rate-limit pacing.
        .target(name: "GitHubClient", dependencies: ["BridgeCore", "COpenSSL", "HTTPClientSupport"]),
        // Wiring: the service actor, ingress routes, dispatcher, configuration loading, logs.
        .target(
            name: "BridgeDaemon",
            dependencies: [
                "BridgeCore", "BridgeStore", "WebhookServer", "PushWardClient", "GitHubClient", "HTTPClientSupport",
            ]),
        .executableTarget(
            name: "pushward-bridge", dependencies: ["BridgeDaemon", "BridgeCore", "BridgeStore", "WebhookServer"]),
        // `make bench`: push economy and webhook-to-request latency against the fake PushWard.
        .executableTarget(
            name: "dispatch-bench", dependencies: ["BridgeDaemon", "BridgeTestSupport", "WebhookServer"]),
        // `make bench-scale`: fills a database with N finished runs through BridgeService.ingest.
        .executableTarget(name: "scale-fill", dependencies: ["BridgeDaemon", "BridgeStore", "BridgeCore"]),
        // `make bench-scale-soak`: the fake PushWard of the tests, served on a loopback port.
        .executableTarget(name: "fake-pushward", dependencies: ["BridgeTestSupport"]),
        .testTarget(
            name: "PushWardClientTests",
            dependencies: ["PushWardClient", "BridgeCore", "HTTPClientSupport", "BridgeTestSupport", "WebhookServer"]),
        .testTarget(
            name: "GitHubClientTests",
            dependencies: ["GitHubClient", "BridgeCore", "BridgeTestSupport", "COpenSSL", "WebhookServer"]),
        .testTarget(
            name: "BridgeCoreTests",
            dependencies: ["BridgeCore", "BridgeTestSupport"],
            // The recorded payloads, golden streams and fuzz inputs: read in place through
            // TestAssets by every test target, so they exist once.
            exclude: ["Fixtures"]
        ),
        // BridgeDaemon: QueryPlanTests records what the status page's snapshot reads.
        .testTarget(name: "BridgeStoreTests", dependencies: ["BridgeStore", "BridgeDaemon", "BridgeTestSupport"]),
        .testTarget(
            name: "BridgeDaemonTests",
            dependencies: ["BridgeDaemon", "BridgeStore", "WebhookServer", "BridgeTestSupport", "HTTPClientSupport"]
        ),
        .testTarget(
            name: "WebhookServerTests",
            dependencies: ["WebhookServer", "BridgeCore", "BridgeTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Upcoming features, on for every Swift target: `any` spelled out wherever an existential is
// meant (ExistentialAny), and each file imports the modules whose members it uses instead of
// reaching them through another file's import (MemberImportVisibility), so a file's imports say
// what it depends on and the layering tests read the truth.
for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
        ]
}
