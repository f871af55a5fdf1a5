import Foundation

// `make bench` runs this after the ingress benchmark: deliveries in vs. PushWard requests out
// for the bundled reference runs, and webhook-to-request latency on loopback.
let arguments = Array(CommandLine.arguments.dropFirst())
let code = await DispatchBenchmark.run(files: arguments.isEmpty ? DispatchBenchmark.defaultFiles : arguments)
exit(code)
