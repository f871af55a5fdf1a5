// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "pushward-bridge",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "pushward-bridge", targets: ["pushward-bridge"])
    ],
    targets: [
        // Pure: GitHub event models, run state, step plan, activity content, reconciler, config values.
        .target(name: "BridgeCore"),
        // Test doubles and the contract validator, shared by every test target.
        .target(name: "BridgeTestSupport", dependencies: ["BridgeCore"]),
        .executableTarget(name: "pushward-bridge", dependencies: ["BridgeCore"]),
        .testTarget(
            name: "BridgeCoreTests",
            dependencies: ["BridgeCore", "BridgeTestSupport"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
