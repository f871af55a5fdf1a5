import Foundation

// `make bench` runs this after the ingress benchmark: deliveries in vs. PushWard requests out
// for the bundled reference runs, webhook-to-request latency on loopback, the push economy, and
// N runs live at once against PushWard's documented limits. `--runs-at-once` runs only the last;
// `--decode [FILE]` only times `WebhookDecoder.decode` (DecodeBenchmark), `--digest [FILE]` the
// hashing of a delivery (DigestBenchmark), `--stored-json` the store's writers (StoredJSONBenchmark).
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--decode", arguments.count <= 2 {
    exit(DecodeBenchmark.run(file: arguments.dropFirst().first))
}
if arguments.first == "--digest", arguments.count <= 2 {
    exit(DigestBenchmark.run(file: arguments.dropFirst().first))
}
if arguments == ["--stored-json"] {
    exit(StoredJSONBenchmark.run())
}
if arguments == ["--runs-at-once"] {
    exit(await ConcurrencyBenchmark.run())
}
let files = arguments.isEmpty ? DispatchBenchmark.defaultFiles : arguments
let code = await DispatchBenchmark.run(files: files)
// What each fidelity level costs, on the same recordings and on scripted runs (simulated clock).
let economyHolds = EconomyBenchmark.report(recorded: files)
// What PushWard's limits cost: evictions, the failing run's wait for a slot, the busiest minute.
let limitsHold = await ConcurrencyBenchmark.run() == 0
exit(code != 0 ? code : (economyHolds && limitsHold ? 0 : 1))
