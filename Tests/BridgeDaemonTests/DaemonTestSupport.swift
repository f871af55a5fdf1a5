import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import WebhookServer

#if canImport(Glibc)
    import Glibc
#endif

// Shared by the daemon tests: fixtures, scratch directories, a log sink, a raw HTTP client, JSON
// payload bodies for scripted runs, and a way to run blocking work off Swift's cooperative pool.
//
// Why off the pool: the ingress answers from libmicrohttpd's threads by starting a `Task` and
// waiting for it, and `Daemon.stop()` waits for its tasks the same way. Those tasks need a
// cooperative thread (two on this machine). A test that blocked one in a socket read or a
// `stop()` could starve the very daemon it waits for, so every blocking call goes through `offPool`.

/// Recorded payloads copied into this target (`Tests/BridgeDaemonTests/Fixtures/`).
enum DaemonFixtures {
    static var directory: URL { TestAssets.fixtures }

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// One run of attempt 10, in the order GitHub sent it: two jobs queued and completed, then the run.
    static let attempt10 = [
        "workflow_job.queued.attempt10-pre-commit.json",
        "workflow_job.completed.attempt10-pre-commit.json",
        "workflow_job.queued.attempt10-test.json",
        "workflow_job.completed.attempt10-test.json",
        "workflow_run.completed.attempt10.json",
    ]

    /// The event a fixture carries: its name up to the first dot.
    static func event(of name: String) -> String {
        String(name.prefix { $0 != "." })
    }
}

/// Runs blocking work on a thread of its own and waits for it without holding a cooperative thread.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}

/// Polls `condition` (off the pool) every 50 ms until it holds or `timeout` seconds pass. The
/// timeout only guards against a condition that never comes, so it is generous: a sanitizer (or a
/// busy machine) slows everything the condition waits for manyfold.
func eventually(
    timeout: Double = 30, _ condition: @escaping @Sendable () throws -> Bool
) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await offPool(condition) { return true }
        if Date() > deadline { return false }
        try await Task.sleep(for: .milliseconds(50))
    }
}

/// Collects the daemon's log lines (one JSON object each) for assertions.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    var logger: Logger {
        Logger(label: "test", minimumLevel: .debug, sink: { [self] line in lock.withLock { stored.append(line) } })
    }

    var lines: [String] { lock.withLock { stored } }

    /// Every line parsed as an object.
    var entries: [[String: JSONValue]] {
        lines.compactMap { try? JSONValue(parsing: Data($0.utf8)).objectValue }
    }

    /// The entries whose `msg` contains `text`.
    func entries(containing text: String) -> [[String: JSONValue]] {
        entries.filter { $0["msg"]?.stringValue?.contains(text) ?? false }
    }
}

/// A configuration file's text for tests, parsed the way `serve` parses it.
struct TestConfiguration {
    var database: String
    var secrets = ["it's a secret to everybody"]
    var listen = "127.0.0.1:0"
    var maxBodyBytes: Int?
    var endDelay = "0s"
    var endDisplayTime = "0s"
    var minUpdateInterval = "0s"
    /// The `filters` object's JSON, if any.
    var filters: String?

    init(database: String) {
        self.database = database
    }

    var json: String {
        var github: [String: JSONValue] = ["webhook_secrets": .array(secrets.map { .string($0) })]
        if let maxBodyBytes { github["max_body_bytes"] = .number(Double(maxBodyBytes)) }
        var root: [String: JSONValue] = [
            "listen": .string(listen), "admin_listen": "127.0.0.1:0", "database": .string(database),
            "github": .object(github),
            "pushward": [
                "end_delay": .string(endDelay), "end_display_time": .string(endDisplayTime),
                "min_update_interval": .string(minUpdateInterval),
                // Every change pushed as it happens: the push economy has tests of its own.
                "fidelity": "full", "coalesce": "0s", "max_updates_per_hour": 3_600,
            ],
        ]
        if let filters {
            // The test wrote it; a typo there is the test's bug and should fail loudly.
            root["filters"] = try? JSONValue(parsing: Data(filters.utf8))
        }
        return JSONValue.object(root).canonicalString
    }

    func parsed() throws -> BridgeConfiguration {
        try BridgeConfiguration(json: Data(json.utf8))
    }
}

/// Starts a daemon on a fresh database in a scratch directory (`configure` adjusts the
/// configuration), runs `body` with it, and stops it whatever happens.
func withDaemon<T>(
    configure: (inout TestConfiguration) -> Void = { _ in },
    _ body: (RunningDaemon) async throws -> T
) async throws -> T {
    let directory = try ScratchDirectory()
    var configuration = TestConfiguration(database: directory.path("bridge.sqlite"))
    configure(&configuration)
    let daemon = try await RunningDaemon.start(configuration, directory: directory)
    let result: T
    do {
        result = try await body(daemon)
    } catch {
        try? await daemon.stop()
        throw error
    }
    try await daemon.stop()
    return result
}

/// A daemon started in-process on an ephemeral port, with its log captured.
final class RunningDaemon: @unchecked Sendable {
    let daemon: Daemon
    let log: LogCapture
    let configuration: BridgeConfiguration
    /// Kept alive as long as the daemon: its database lives there.
    let directory: ScratchDirectory?

    private init(daemon: Daemon, log: LogCapture, configuration: BridgeConfiguration, directory: ScratchDirectory?) {
        self.daemon = daemon
        self.log = log
        self.configuration = configuration
        self.directory = directory
    }

    /// `transport` stands in for PushWard; nil sends nothing (dry-run, the configuration has no key).
    static func start(
        _ configuration: TestConfiguration, directory: ScratchDirectory? = nil,
        transport: (any PushWardTransport)? = nil
    ) async throws -> RunningDaemon {
        let parsed = try configuration.parsed()
        let log = LogCapture()
        let logger = log.logger
        let daemon = try await offPool { try Daemon.start(configuration: parsed, logger: logger, transport: transport) }
        return RunningDaemon(daemon: daemon, log: log, configuration: parsed, directory: directory)
    }

    /// Stops the daemon if the test did not (a second stop does nothing): one left serving holds
    /// its listeners' threads and descriptors and its database for the rest of the run. The
    /// directory goes only after the stop.
    deinit {
        let (daemon, directory) = (daemon, directory)
        Thread.detachNewThread {
            daemon.stop()
            withExtendedLifetime(directory) {}
        }
    }

    var port: Int { daemon.port }
    var databasePath: String { configuration.database }

    /// Stops the daemon; background work gets `deadline` seconds to finish, as in `serve`.
    func stop(deadline: Double = 10) async throws {
        let daemon = daemon
        try await offPool { daemon.stop(deadline: deadline) }
    }

    /// One signed `POST /webhook`.
    func deliver(
        event: String, id: String, body: Data, secret: String? = nil, contentType: String = "application/json",
        extraHeaders: [(String, String)] = []
    ) async throws -> HTTPTestClient.Response {
        let headers = signedHeaders(
            event: event, id: id, body: body, secret: secret ?? configuration.webhookSecrets[0],
            contentType: contentType)
        return try await request(method: "POST", target: "/webhook", headers: headers + extraHeaders, body: body)
    }

    /// Any request, sent as given (no signature added).
    func request(
        method: String, target: String, headers: [(String, String)] = [], body: Data = Data()
    ) async throws -> HTTPTestClient.Response {
        let port = port
        return try await offPool {
            try HTTPTestClient.request(port: port, method: method, target: target, headers: headers, body: body)
        }
    }

    /// Reads the daemon's database through a read-only connection of its own, off the pool.
    func read<T: Sendable>(_ body: @escaping @Sendable (BridgeDatabase) throws -> T) async throws -> T {
        let path = databasePath
        return try await offPool { try body(try BridgeDatabase(path: path, readOnly: true)) }
    }

    /// Waits until the card on `slug` has ended.
    func waitUntilEnded(slug: String, timeout: Double = 30) async throws -> Bool {
        let path = databasePath
        return try await eventually(timeout: timeout) {
            let database = try BridgeDatabase(path: path, readOnly: true)
            return try database.session(slug: slug)?.stored.session.phase == .ended
        }
    }
}

/// A plain HTTP/1.1 client on a blocking socket, for control over the bytes and their timing.
/// Every read waits at most `timeout` seconds, so a server that never answers fails the test.
final class HTTPTestClient {
    struct Response: Sendable {
        var status: Int
        /// Lowercased names.
        var headers: [String: String]
        var body: Data

        /// The body as a JSON object (every answer of the listener is one).
        var json: [String: JSONValue]? {
            (try? JSONValue(parsing: body))?.objectValue
        }

        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let fd: Int32
    let timeout: Double
    private var pending = Data()

    init(port: Int, timeout: Double = 20) throws {
        self.timeout = timeout
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(socketFD)
            throw Failure(description: "connect to port \(port): \(String(cString: strerror(code)))")
        }
        fd = socketFD
    }

    /// Connects to a Unix domain socket (an `admin_listen` of `unix:PATH`).
    init(unixSocket path: String, timeout: Double = 20) throws {
        self.timeout = timeout
        let socketFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes.prefix(raw.count - 1))
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(socketFD)
            throw Failure(description: "connect to \(path): \(String(cString: strerror(code)))")
        }
        fd = socketFD
    }

    deinit {
        close(fd)
    }

    func send(_ text: String) throws {
        try send(Data(text.utf8))
    }

    func send(_ data: Data) throws {
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count {
                let sent = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    if errno == EINTR { continue }
                    throw Failure(description: "send: \(String(cString: strerror(errno)))")
                }
                offset += sent
            }
        }
    }

    private func receiveSome() throws -> Data {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(timeout * 1000))
        if ready == 0 { throw Failure(description: "no answer within \(timeout) s (\(pending.count) bytes read)") }
        if ready < 0 { throw Failure(description: "poll: \(String(cString: strerror(errno)))") }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(fd, &buffer, buffer.count, 0)
        if count < 0 {
            if errno == ECONNRESET { return Data() }
            throw Failure(description: "recv: \(String(cString: strerror(errno)))")
        }
        return Data(buffer[0..<count])
    }

    /// Reads one response with a `Content-Length` body (the listener always sends one).
    func readResponse() throws -> Response {
        let separator = Data("\r\n\r\n".utf8)
        while pending.range(of: separator) == nil {
            let chunk = try receiveSome()
            if chunk.isEmpty { throw Failure(description: "closed after \(pending.count) bytes") }
            pending.append(chunk)
        }
        let headerEnd = pending.range(of: separator)!
        let head = String(decoding: pending[pending.startIndex..<headerEnd.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "cannot parse the status line of \(head)")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        pending = Data(pending[headerEnd.upperBound...])
        let length = headers["content-length"].flatMap { Int($0) } ?? 0
        while pending.count < length {
            let chunk = try receiveSome()
            if chunk.isEmpty { throw Failure(description: "closed inside a body of \(length) bytes") }
            pending.append(chunk)
        }
        let body = Data(pending.prefix(length))
        pending = Data(pending.dropFirst(length))
        return Response(status: status, headers: headers, body: body)
    }

    /// The head of a request with `Connection: close` and the given `Content-Length`.
    static func head(
        method: String, target: String, headers: [(String, String)], contentLength: Int, host: String? = "localhost"
    ) -> String {
        var head = "\(method) \(target) HTTP/1.1\r\n" + (host.map { "Host: \($0)\r\n" } ?? "") + "Connection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return head + "Content-Length: \(contentLength)\r\n\r\n"
    }

    /// One complete request and its response.
    static func request(
        port: Int, method: String, target: String, headers: [(String, String)] = [], body: Data = Data(),
        host: String? = "localhost", timeout: Double = 20
    ) throws -> Response {
        let client = try HTTPTestClient(port: port, timeout: timeout)
        let head = head(method: method, target: target, headers: headers, contentLength: body.count, host: host)
        try client.send(Data(head.utf8) + body)
        return try client.readResponse()
    }
}

/// Turns scripted `WebhookEvent`s back into the JSON bodies GitHub would send, so a `RunScript`
/// can be played over HTTP. Only the fields the decoder reads are written.
enum GitHubPayload {
    static func eventName(_ event: WebhookEvent) -> String {
        switch event {
        case .workflowRun: "workflow_run"
        case .workflowJob: "workflow_job"
        case .ping: "ping"
        case .unsupported(let name): name
        }
    }

    static func body(_ event: WebhookEvent) -> Data {
        json(event).canonicalData
    }

    static func json(_ event: WebhookEvent) -> JSONValue {
        switch event {
        case .workflowRun(let delivery):
            let run = delivery.run
            return [
                "action": .string(delivery.action),
                "workflow_run": [
                    "id": number(run.id), "run_attempt": number(run.runAttempt), "run_number": number(run.runNumber),
                    "workflow_id": number(run.workflowID), "name": string(run.name),
                    "display_title": string(run.displayTitle), "path": string(run.path),
                    "head_branch": string(run.headBranch), "head_sha": string(run.headSHA),
                    "event": string(run.event), "status": .string(run.status.rawValue),
                    "conclusion": string(run.conclusion), "html_url": string(run.htmlURL),
                    "run_started_at": time(run.runStartedAt), "created_at": time(run.createdAt),
                    "updated_at": time(run.updatedAt),
                    "pull_requests": .array(run.pullRequests.map { ["number": number($0.number)] }),
                ],
                "repository": repository(delivery.repository),
            ]
        case .workflowJob(let delivery):
            let job = delivery.job
            var object: [String: JSONValue] = [
                "action": .string(delivery.action),
                "workflow_job": [
                    "id": number(job.id), "run_id": number(job.runID), "run_attempt": number(job.runAttempt),
                    "name": .string(job.name), "workflow_name": string(job.workflowName),
                    "head_branch": string(job.headBranch), "head_sha": string(job.headSHA),
                    "status": .string(job.status.rawValue), "conclusion": string(job.conclusion),
                    "created_at": time(job.createdAt), "started_at": time(job.startedAt),
                    "completed_at": time(job.completedAt),
                    "steps": .array(
                        job.steps.map { step in
                            [
                                "number": number(step.number), "name": .string(step.name),
                                "status": .string(step.status.rawValue), "conclusion": string(step.conclusion),
                                "started_at": time(step.startedAt), "completed_at": time(step.completedAt),
                            ]
                        }),
                    "labels": .array(job.labels.map { .string($0) }), "runner_name": string(job.runnerName),
                    "html_url": string(job.htmlURL),
                ],
                "repository": repository(delivery.repository),
            ]
            if let environment = delivery.deploymentEnvironment {
                object["deployment"] = ["environment": .string(environment)]
            }
            return .object(object)
        case .ping(let ping):
            var object: [String: JSONValue] = [
                "zen": string(ping.zen), "hook_id": number(ping.hookID),
                "hook": [
                    "id": number(ping.hookID), "events": .array(ping.events.map { .string($0) }),
                    "config": ["content_type": string(ping.contentType)],
                ],
            ]
            if let repository = ping.repository { object["repository"] = self.repository(repository) }
            return .object(object)
        case .unsupported:
            return ["action": "completed"]
        }
    }

    private static func repository(_ repository: Repository) -> JSONValue {
        ["full_name": .string(repository.fullName), "html_url": string(repository.htmlURL)]
    }

    private static func number(_ value: Int?) -> JSONValue {
        value.map { .number(Double($0)) } ?? .null
    }

    private static func string(_ value: String?) -> JSONValue {
        value.map { .string($0) } ?? .null
    }

    private static func time(_ value: UnixTime?) -> JSONValue {
        value.map { .string(Logger.timestamp(Date(timeIntervalSince1970: $0))) } ?? .null
    }
}

/// The headers of a delivery GitHub signed with `secret`; an empty `event` or `id` leaves that header out.
func signedHeaders(
    event: String, id: String, body: Data, secret: String, contentType: String = "application/json"
) -> [(String, String)] {
    var headers: [(String, String)] = [("Content-Type", contentType)]
    if !event.isEmpty { headers.append(("X-GitHub-Event", event)) }
    if !id.isEmpty { headers.append(("X-GitHub-Delivery", id)) }
    headers.append(("X-Hub-Signature-256", WebhookSignature.sign(body: body, secret: secret)))
    return headers
}

/// A unique delivery id, as GitHub's are (a UUID).
func deliveryID(_ label: String = "d") -> String {
    "\(label)-\(UUID().uuidString.lowercased())"
}

/// Carries a connection between the threads `offPool` runs on; one of them uses it at a time.
final class SQLiteConnectionBox: @unchecked Sendable {
    let connection: SQLiteConnection

    init(_ connection: SQLiteConnection) {
        self.connection = connection
    }
}

extension BridgeProcess {
    /// Runs a command to completion (at most `timeout` seconds), off the cooperative pool.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], in directory: ScratchDirectory,
        timeout: Double = 20
    ) async throws -> Result {
        try await offPool {
            try runToCompletion(arguments, environment: environment, in: directory, timeout: timeout)
        }
    }
}

/// Waits until `condition` holds, asking again every 50 ms, with no deadline of its own: the
/// test's time limit, which cancels the task, is the only bound. For the daemon's own state, which
/// has no event a test can wait on (the fakes' state has one: `until`). False only when cancelled.
func untilTrue(_ condition: () async -> Bool) async -> Bool {
    while !Task.isCancelled {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return await condition()
}
