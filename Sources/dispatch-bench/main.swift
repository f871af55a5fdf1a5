import Foundation

// `make bench` runs this after the ingress benchmark: deliveries in vs. PushWard requests out
// for the bundled reference runs, webhook-to-request latency on loopback, and the push economy.
let arguments = Array(CommandLine.arguments.dropFirst())
let files = arguments.isEmpty ? DispatchBenchmark.defaultFiles : arguments
let code = await DispatchBenchmark.run(files: files)
// What each fidelity level costs, on the same recordings and on scripted runs (simulated clock).
let economyHolds = EconomyBenchmark.report(recorded: files)
exit(code != 0 ? code : (economyHolds ? 0 : 1))
