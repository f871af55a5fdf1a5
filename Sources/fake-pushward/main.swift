import BridgeTestSupport
import Foundation

// `make bench-scale-soak` points the daemon's dispatcher here: the in-repo fake PushWard
// (BridgeTestSupport), which applies every request as the contract says, served on a loopback
// port until SIGTERM or SIGINT.
//
//   fake-pushward [--port N] [--api-key KEY]
//
// Prints `{"port": N}` once listening. What the fake remembers of each request is dropped every
// minute: over an hour's soak it would otherwise grow by gigabytes, in a process nobody measures
// but on the same machine.

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let server = try FakePushWardServer(
    apiKey: option("api-key") ?? "hlk_bench", port: option("port").flatMap(Int.init) ?? 0)
FileHandle.standardOutput.write(Data("{\"port\": \(server.port)}\n".utf8))
signal(SIGTERM, SIG_IGN)
signal(SIGINT, SIG_IGN)
let stop = DispatchSemaphore(value: 0)
var sources: [any DispatchSourceSignal] = []
for number in [SIGTERM, SIGINT] {
    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
    source.setEventHandler { stop.signal() }
    source.resume()
    sources.append(source)
}
var requests = 0
var violations = 0
var stopping = false
while !stopping {
    stopping = stop.wait(timeout: .now() + 60) == .success
    let forgotten = server.forgetRequests()
    requests += forgotten.requests
    violations += forgotten.violations
}
server.stop()
// The soak's check that every request the daemon sent was one PushWard would take.
FileHandle.standardOutput.write(Data("{\"requests\": \(requests), \"violations\": \(violations)}\n".utf8))
