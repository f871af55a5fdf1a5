import Foundation

/// Turns a GitHub webhook delivery (event header, raw body, content type) into a `WebhookEvent`.
///
/// Tolerant on purpose: GitHub has changed these payloads over the years (2021-era jobs have no
/// `run_attempt`, `workflow_name` or `head_branch`) and a daemon that drops a delivery loses a
/// Live Activity update for good, since GitHub never retries. So only the few fields the models hold
/// are read, unknown fields and unknown status strings are accepted, and only what the bridge
/// cannot work without (ids, the job's name and status, the repository) is required.
///
/// Read with Foundation's `JSONDecoder` into `Decodable` wire types with explicit keys: payloads are
/// 5–25 KB, mostly `repository`/`sender` objects the bridge does not need, and the wire types read
/// just the fields the models hold. A hand-written tape parser was about 3.4 times faster (11 µs
/// against 36 µs for an 8.7 KB job on a quiet machine, `dispatch-bench --decode`), but 25 µs a
/// delivery is well under 1 % of a core at the busiest rate seen (under 100 a second), and it was
/// 1,541 lines of unsafe code parsing input from the internet.
public enum WebhookDecoder {
    /// Decodes one delivery.
    ///
    /// - Parameters:
    ///   - event: the `X-GitHub-Event` header. Events other than `workflow_run`, `workflow_job` and
    ///     `ping` return `.unsupported` without the body being looked at.
    ///   - body: the raw request body, exactly as received.
    ///   - contentType: the `Content-Type` header; nil to guess from the body.
    public static func decode(
        event: String, body: Data, contentType: String?
    ) throws(WebhookDecodingError) -> WebhookEvent {
        switch event {
        case "workflow_run":
            let payload = try decodeWire(RunPayload.self, from: try json(body: body, contentType: contentType))
            return .workflowRun(try payload.event())
        case "workflow_job":
            let payload = try decodeWire(JobPayload.self, from: try json(body: body, contentType: contentType))
            return .workflowJob(try payload.event())
        case "ping":
            let payload = try decodeWire(PingPayload.self, from: try json(body: body, contentType: contentType))
            return .ping(payload.event)
        default:
            return .unsupported(event: event)
        }
    }
}

// MARK: - Body and content type

extension WebhookDecoder {
    private enum BodyFormat {
        case json
        case form
    }

    /// The JSON document of the delivery: the body itself, or the form's `payload` field.
    private static func json(body: Data, contentType: String?) throws(WebhookDecodingError) -> Data {
        guard let firstByte = body.first(where: { !isWhitespace($0) }) else { throw .emptyBody }
        let format: BodyFormat
        if let contentType {
            format = try bodyFormat(contentType: contentType)
        } else {
            format = looksLikeForm(body, firstByte: firstByte) ? .form : .json
        }
        switch format {
        case .json:
            return body
        case .form:
            guard let payload = formField(named: "payload", in: body) else { throw .missingPayloadField }
            guard payload.contains(where: { !isWhitespace($0) }) else { throw .emptyBody }
            return payload
        }
    }

    /// The media type, ignoring parameters (`; charset=utf-8`) and case, as HTTP says.
    private static func bodyFormat(contentType: String) throws(WebhookDecodingError) -> BodyFormat {
        let mediaType = contentType.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
        switch mediaType {
        case "application/json":
            return .json
        case "application/x-www-form-urlencoded":
            return .form
        default:
            throw .unsupportedContentType(contentType)
        }
    }

    /// Without a content type, a body that starts like `name=` is a form; anything else is parsed
    /// as JSON, so that garbage is reported as invalid JSON rather than as a form missing a field.
    private static func looksLikeForm(_ body: Data, firstByte: UInt8) -> Bool {
        guard firstByte != UInt8(ascii: "{"), firstByte != UInt8(ascii: "[") else { return false }
        for byte in body {
            if byte == UInt8(ascii: "=") { return true }
            let isNameByte =
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "%") || byte == UInt8(ascii: "+")
            if !isNameByte { return false }
        }
        return false
    }

    /// The decoded value of the first field called `name` in an `application/x-www-form-urlencoded`
    /// body, or nil when there is none. A field without `=` has an empty value (WHATWG URL standard).
    ///
    /// Works on a copy of the bytes as an array: indexing `Data` byte by byte is an order of
    /// magnitude slower, the payload field is the whole 5–25 KB event, and copying it costs about a
    /// microsecond without an unsafe pointer.
    private static func formField(named name: String, in body: Data) -> Data? {
        let wanted = Array(name.utf8)
        let bytes = [UInt8](body)
        var pairStart = 0
        while pairStart <= bytes.count {
            let pairEnd = bytes[pairStart...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
            let pair = bytes[pairStart..<pairEnd]
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            if !pair.isEmpty, percentDecoded(pair[..<(equals ?? pairEnd)]) == wanted {
                guard let equals else { return Data() }
                return Data(percentDecoded(pair[(equals + 1)...]))
            }
            pairStart = pairEnd + 1
        }
        return nil
    }

    /// Form decoding: `+` is a space and `%XX` a byte. A `%` not followed by two hex digits is kept
    /// as it is, as the WHATWG URL standard does, rather than failing the delivery.
    private static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), bytes.endIndex - index >= 3,
                let high = PercentEncoding.hexValue(bytes[index + 1]),
                let low = PercentEncoding.hexValue(bytes[index + 2])
            {
                output.append(high << 4 | low)
                index += 2
            } else {
                output.append(byte)
            }
            index += 1
        }
        return output
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

// MARK: - JSON decoding and error mapping

extension WebhookDecoder {
    /// A field whose JSON type is right but whose content is not: an unparseable timestamp, or a
    /// number that is not a 64-bit integer. Thrown from the wire types' initialisers, which know the
    /// coding path, and mapped to `WebhookDecodingError.invalidField` by `decodeWire`.
    fileprivate struct FieldFormatError: Error {
        var codingPath: [any CodingKey]
        var expected: String
    }

    /// The values an id, attempt or count from a payload may take: positive, and small enough
    /// that no arithmetic on it can overflow.
    static let identifierRange = 1...9_007_199_254_740_991

    /// Decodes with `JSONDecoder` and maps its errors, and the wire types' own, to
    /// `WebhookDecodingError`. A decoder per call: a shared one would need `nonisolated(unsafe)`,
    /// its options being mutable, and making one costs next to nothing beside the parse.
    private static func decodeWire<Wire: Decodable>(
        _ type: Wire.Type, from json: Data
    ) throws(WebhookDecodingError) -> Wire {
        do {
            return try JSONDecoder().decode(Wire.self, from: json)
        } catch let error as DecodingError {
            throw mapped(error, json: json)
        } catch let error as FieldFormatError {
            throw .invalidField(dottedPath(error.codingPath), expected: error.expected)
        } catch {
            throw .invalidJSON(String(describing: error))
        }
    }

    private static func mapped(_ error: DecodingError, json: Data) -> WebhookDecodingError {
        switch error {
        case .keyNotFound(let key, let context):
            return .missingField(dottedPath(context.codingPath + [key]))
        case .valueNotFound(_, let context):
            return .missingField(dottedPath(context.codingPath))
        case .typeMismatch(let type, let context):
            return .invalidField(dottedPath(context.codingPath), expected: expectedDescription(of: type))
        case .dataCorrupted(let context):
            guard !context.codingPath.isEmpty else { return .invalidJSON(syntaxErrorDetail(json)) }
            return .invalidField(
                dottedPath(context.codingPath), expected: "a valid value (\(context.debugDescription))")
        @unknown default:
            return .invalidJSON(String(describing: error))
        }
    }

    /// `workflow_job.steps[2].started_at`: keys joined by dots, array indices in brackets.
    static func dottedPath(_ codingPath: [any CodingKey]) -> String {
        var path = ""
        for key in codingPath {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                if !path.isEmpty { path += "." }
                path += key.stringValue
            }
        }
        return path.isEmpty ? "(top level)" : path
    }

    private static func expectedDescription(of type: Any.Type) -> String {
        switch type {
        case is Int.Type: "a whole number"
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is [Any].Type: "an array"
        default: type == [String: Any].self ? "an object" : "a JSON \(type)"
        }
    }

    /// Where the JSON breaks, plus how the body starts (a form body sent as JSON shows at once).
    ///
    /// swift-corelibs-foundation's `JSONDecoder` says only "The given data was not valid JSON", so
    /// the body is parsed again with `JSONSerialization`, whose message names the character. This
    /// runs only for bodies already rejected, never on the hot path.
    private static func syntaxErrorDetail(_ json: Data) -> String {
        var reason = "it could not be parsed"
        do {
            _ = try JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
        } catch {
            let nsError = error as NSError
            reason = (nsError.userInfo[NSDebugDescriptionErrorKey] as? String) ?? nsError.localizedDescription
        }
        let start = String(decoding: json.prefix(40), as: UTF8.self)
            .map { $0.isNewline ? " " : String($0) }.joined()
        return "\(reason) The body starts with '\(start)'."
    }
}

// MARK: - Statuses

extension WebhookDecoder {
    /// Known names map to their case (`pending` included: `RunStatus` has it); missing or unknown
    /// ones count as `queued`, rank 0, so any later known status wins over them.
    static func runStatus(_ text: String?) -> RunStatus {
        guard let text else { return .queued }
        return RunStatus(rawValue: text) ?? .queued
    }

    /// Missing or unknown job and step statuses count as `queued` for the same reason; `pending`
    /// (a REST API status with no `JobStatus` case) and `requested` are among them.
    static func jobStatus(_ text: String?) -> JobStatus {
        guard let text else { return .queued }
        return JobStatus(rawValue: text) ?? .queued
    }
}

// MARK: - Repository

extension WebhookDecoder {
    /// The repository named by a web URL (`https://github.com/owner/name/...`) or an API URL
    /// (`https://api.github.com/repos/owner/name/...`), for job payloads without `repository`.
    static func repository(webURL: String?, apiURL: String?) -> Repository? {
        if let webURL, let (origin, segments) = urlParts(webURL), segments.count >= 2 {
            let fullName = "\(segments[0])/\(segments[1])"
            return Repository(fullName: fullName, htmlURL: "\(origin)/\(fullName)")
        }
        if let apiURL, let (origin, segments) = urlParts(apiURL),
            let reposIndex = segments.firstIndex(of: "repos"), segments.count >= reposIndex + 3
        {
            let fullName = "\(segments[reposIndex + 1])/\(segments[reposIndex + 2])"
            // github.com's API lives on its own host; Enterprise Server serves both from one host.
            let webOrigin = origin.replacingOccurrences(of: "://api.github.com", with: "://github.com")
            return Repository(fullName: fullName, htmlURL: "\(webOrigin)/\(fullName)")
        }
        return nil
    }

    /// `scheme://host` and the non-empty path segments of an absolute URL; nil if it is not one.
    private static func urlParts(_ url: String) -> (origin: Substring, segments: [Substring])? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let afterScheme = url[schemeEnd.upperBound...]
        let hostEnd = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        guard hostEnd > afterScheme.startIndex else { return nil }
        let path = afterScheme[hostEnd...].prefix { $0 != "?" && $0 != "#" }
        return (url[..<hostEnd], path.split(separator: "/"))
    }
}

// MARK: - Wire types

extension WebhookDecoder {
    /// `repository` (top level, or nested in `workflow_run`), and `workflow_run.head_repository`.
    private struct WireRepository: Decodable {
        var id: Int?
        var fullName: String?
        var htmlURL: String?
        var defaultBranch: String?

        enum CodingKeys: String, CodingKey {
            case id
            case fullName = "full_name"
            case htmlURL = "html_url"
            case defaultBranch = "default_branch"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // Nothing depends on it: an odd one must not cost the delivery.
            id = (try? container.decodeIdentifierIfPresent(forKey: .id)) ?? nil
            fullName = try container.decodeIfPresent(String.self, forKey: .fullName)
            htmlURL = try container.decodeIfPresent(String.self, forKey: .htmlURL)
            defaultBranch = try container.decodeIfPresent(String.self, forKey: .defaultBranch)
        }

        var repository: Repository? {
            guard let fullName, !fullName.isEmpty else { return nil }
            return Repository(fullName: fullName, htmlURL: htmlURL, defaultBranch: defaultBranch)
        }
    }

    /// A user object (`actor`, `triggering_actor`): only its login is read.
    private struct WireUser: Decodable {
        var login: String?

        enum CodingKeys: String, CodingKey {
            case login
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            login = try container.decodeIfPresent(String.self, forKey: .login)
        }
    }

    /// `head_commit`: only the first line of its message is read (the commit's title).
    private struct WireCommit: Decodable {
        var title: String?

        enum CodingKeys: String, CodingKey {
            case message
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decodeIfPresent(String.self, forKey: .message).map {
                String($0.prefix { $0 != "\n" && $0 != "\r" && $0 != "\r\n" })
            }
        }
    }

    /// A `workflow_run` delivery. A missing `action` is an empty string: the run's `status`, not
    /// the action, is what orders events, so a payload without one is still usable.
    private struct RunPayload: Decodable {
        var action: String
        var run: WireRun
        var repository: WireRepository?
        var sender: String?

        enum CodingKeys: String, CodingKey {
            case action
            case run = "workflow_run"
            case repository
            case sender
            case workflow
        }

        enum WorkflowKeys: String, CodingKey {
            case name
            case path
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            action = try container.decodeIfPresent(String.self, forKey: .action) ?? ""
            run = try container.decode(WireRun.self, forKey: .run)
            repository = try container.decodeIfPresent(WireRepository.self, forKey: .repository)
            sender = try container.decodeIfPresent(WireUser.self, forKey: .sender)?.login
            // Gitea's run has no `name` or `path`; the top-level `workflow` object has both, and
            // the card is labelled with the name. Read only to fill those in, never required.
            if run.run.name?.isEmpty ?? true || run.run.path == nil, container.contains(.workflow),
                let workflow = try? container.nestedContainer(keyedBy: WorkflowKeys.self, forKey: .workflow)
            {
                if run.run.name?.isEmpty ?? true,
                    let name = try? workflow.decodeIfPresent(String.self, forKey: .name),
                    !name.isEmpty
                {
                    run.run.name = name
                }
                if run.run.path == nil {
                    run.run.path = try? workflow.decodeIfPresent(String.self, forKey: .path)
                }
            }
        }

        /// The top-level repository, else the copy inside `workflow_run`, else the run's web URL.
        func event() throws(WebhookDecodingError) -> WorkflowRunEvent {
            guard
                let repository = repository?.repository ?? run.repository?.repository
                    ?? WebhookDecoder.repository(webURL: run.run.htmlURL, apiURL: nil)
            else { throw .missingField("repository.full_name") }
            var run = run.run
            if let webURL = repository.htmlURL {
                for index in run.pullRequests.indices {
                    run.pullRequests[index].htmlURL = "\(webURL)/pull/\(run.pullRequests[index].number)"
                }
            }
            return WorkflowRunEvent(action: action, run: run, repository: repository, sender: sender)
        }
    }

    /// `workflow_run`, decoded straight into the public model plus the nested repository.
    private struct WireRun: Decodable {
        var run: WorkflowRun
        var repository: WireRepository?

        enum CodingKeys: String, CodingKey {
            case id
            case runAttempt = "run_attempt"
            case runNumber = "run_number"
            case workflowID = "workflow_id"
            case name
            case displayTitle = "display_title"
            case path
            case headBranch = "head_branch"
            case headSHA = "head_sha"
            case event
            case status
            case conclusion
            case htmlURL = "html_url"
            case runStartedAt = "run_started_at"
            case createdAt = "created_at"
            case updatedAt = "updated_at"
            case pullRequests = "pull_requests"
            case repository
            case headRepository = "head_repository"
            case actor
            case triggeringActor = "triggering_actor"
            case headCommit = "head_commit"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            run = WorkflowRun(
                id: try container.decodeIdentifier(forKey: .id),
                runAttempt: try container.decodeIdentifierIfPresent(forKey: .runAttempt) ?? 1,
                runNumber: try container.decodeIdentifierIfPresent(forKey: .runNumber),
                workflowID: try container.decodeIdentifierIfPresent(forKey: .workflowID),
                name: try container.decodeIfPresent(String.self, forKey: .name),
                displayTitle: try container.decodeIfPresent(String.self, forKey: .displayTitle),
                path: try container.decodeIfPresent(String.self, forKey: .path),
                headBranch: try container.decodeIfPresent(String.self, forKey: .headBranch),
                headSHA: try container.decodeIfPresent(String.self, forKey: .headSHA),
                event: try container.decodeIfPresent(String.self, forKey: .event),
                status: WebhookDecoder.runStatus(try container.decodeIfPresent(String.self, forKey: .status)),
                conclusion: try container.decodeIfPresent(String.self, forKey: .conclusion),
                htmlURL: try container.decodeIfPresent(String.self, forKey: .htmlURL),
                runStartedAt: try container.decodeTimestamp(forKey: .runStartedAt),
                createdAt: try container.decodeTimestamp(forKey: .createdAt),
                updatedAt: try container.decodeTimestamp(forKey: .updatedAt),
                pullRequests: try container.decodeIfPresent([WirePullRequest].self, forKey: .pullRequests)?
                    .map(\.reference) ?? [],
                actor: try container.decodeIfPresent(WireUser.self, forKey: .actor)?.login,
                triggeringActor: try container.decodeIfPresent(WireUser.self, forKey: .triggeringActor)?.login,
                commitTitle: try container.decodeIfPresent(WireCommit.self, forKey: .headCommit)?.title
            )
            repository = try container.decodeIfPresent(WireRepository.self, forKey: .repository)
            // Null when the fork was deleted: the run's origin is then unknown (`RunState.origin`).
            let head = try container.decodeIfPresent(WireRepository.self, forKey: .headRepository)
            run.headRepository = head?.fullName.flatMap { $0.isEmpty ? nil : $0 }
            run.headRepositoryID = head?.id
        }
    }

    /// An entry of `workflow_run.pull_requests`; its web URL is filled in once the repository is known.
    private struct WirePullRequest: Decodable {
        var reference: PullRequestReference

        enum CodingKeys: String, CodingKey {
            case number
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            reference = PullRequestReference(number: try container.decodeIdentifier(forKey: .number))
        }
    }

    /// A `workflow_job` delivery (`action` defaults as in `RunPayload`). `deployment` is read only for
    /// its `environment`, which GitHub sends with jobs held by an environment protection rule.
    private struct JobPayload: Decodable {
        var action: String
        var job: WireJob
        var repository: WireRepository?
        var deploymentEnvironment: String?
        var sender: String?

        enum CodingKeys: String, CodingKey {
            case action
            case job = "workflow_job"
            case repository
            case deployment
            case sender
        }

        enum DeploymentKeys: String, CodingKey {
            case environment
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            action = try container.decodeIfPresent(String.self, forKey: .action) ?? ""
            job = try container.decode(WireJob.self, forKey: .job)
            // A job's action names its status (`queued`, `waiting`, `in_progress`, `completed`):
            // a payload without `status` is read by it rather than refused.
            if !job.hasStatus { job.job.status = WebhookDecoder.jobStatus(action) }
            repository = try container.decodeIfPresent(WireRepository.self, forKey: .repository)
            sender = try container.decodeIfPresent(WireUser.self, forKey: .sender)?.login
            // `decodeNil` throws for an absent key, hence `contains` first.
            if container.contains(.deployment), try !container.decodeNil(forKey: .deployment) {
                let deployment = try container.nestedContainer(keyedBy: DeploymentKeys.self, forKey: .deployment)
                deploymentEnvironment = try deployment.decodeIfPresent(String.self, forKey: .environment)
            } else {
                deploymentEnvironment = nil
            }
        }

        /// The top-level repository, else the one the job's URLs name.
        func event() throws(WebhookDecodingError) -> WorkflowJobEvent {
            guard
                let repository = repository?.repository
                    ?? WebhookDecoder.repository(webURL: job.job.htmlURL, apiURL: job.runURL)
            else { throw .missingField("repository.full_name") }
            return WorkflowJobEvent(
                action: action, job: job.job, repository: repository, deploymentEnvironment: deploymentEnvironment,
                sender: sender)
        }
    }

    /// `workflow_job`, decoded straight into the public model plus `run_url` (a repository source).
    private struct WireJob: Decodable {
        var job: WorkflowJob
        var runURL: String?
        /// False when the payload had no `status` (absent or null): the delivery's action says it.
        var hasStatus: Bool

        enum CodingKeys: String, CodingKey {
            case id
            case runID = "run_id"
            case runAttempt = "run_attempt"
            case name
            case workflowName = "workflow_name"
            case headBranch = "head_branch"
            case headSHA = "head_sha"
            case status
            case conclusion
            case createdAt = "created_at"
            case startedAt = "started_at"
            case completedAt = "completed_at"
            case steps
            case labels
            case runnerName = "runner_name"
            case htmlURL = "html_url"
            case runURL = "run_url"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            job = WorkflowJob(
                id: try container.decodeIdentifier(forKey: .id),
                runID: try container.decodeIdentifier(forKey: .runID),
                runAttempt: try container.decodeIdentifierIfPresent(forKey: .runAttempt) ?? 1,
                name: try container.decode(String.self, forKey: .name),
                workflowName: try container.decodeIfPresent(String.self, forKey: .workflowName),
                headBranch: try container.decodeIfPresent(String.self, forKey: .headBranch),
                headSHA: try container.decodeIfPresent(String.self, forKey: .headSHA),
                status: WebhookDecoder.jobStatus(try container.decodeIfPresent(String.self, forKey: .status)),
                conclusion: try container.decodeIfPresent(String.self, forKey: .conclusion),
                createdAt: try container.decodeTimestamp(forKey: .createdAt),
                startedAt: try container.decodeTimestamp(forKey: .startedAt),
                completedAt: try container.decodeTimestamp(forKey: .completedAt),
                steps: try container.decodeIfPresent([WireStep].self, forKey: .steps)?.map(\.step) ?? [],
                labels: try container.decodeIfPresent([String].self, forKey: .labels) ?? [],
                runnerName: try container.decodeIfPresent(String.self, forKey: .runnerName),
                htmlURL: try container.decodeIfPresent(String.self, forKey: .htmlURL)
            )
            runURL = try container.decodeIfPresent(String.self, forKey: .runURL)
            // `decodeNil` throws for an absent key: absent and null both read as no status.
            hasStatus = (try? container.decodeNil(forKey: .status)) == false
        }
    }

    /// An entry of `workflow_job.steps`. Nothing of it is required: the card never draws a job's
    /// steps (only whether it has any, and an alert names the first failed one), so a field a
    /// sender writes its own way is dropped rather than refusing the delivery, and with it every
    /// job update GitHub will not send again. Gitea numbers steps from 0; a missing, null or
    /// unreadable `number` is nil, a missing or unreadable `name` is `""`, a status `queued`, and an
    /// unparseable time nil.
    private struct WireStep: Decodable {
        var step: JobStep

        enum CodingKeys: String, CodingKey {
            case number
            case name
            case status
            case conclusion
            case startedAt = "started_at"
            case completedAt = "completed_at"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            step = JobStep(
                number: try? container.decodeIfPresent(Int.self, forKey: .number),
                name: (try? container.decodeIfPresent(String.self, forKey: .name)) ?? "",
                status: WebhookDecoder.jobStatus(try? container.decodeIfPresent(String.self, forKey: .status)),
                conclusion: try? container.decodeIfPresent(String.self, forKey: .conclusion),
                startedAt: container.lenientTimestamp(forKey: .startedAt),
                completedAt: container.lenientTimestamp(forKey: .completedAt)
            )
        }
    }

    /// A `ping` delivery: everything is optional, since it only tells whether the hook fits.
    private struct PingPayload: Decodable {
        var event: PingEvent

        enum CodingKeys: String, CodingKey {
            case zen
            case hookID = "hook_id"
            case hook
            case repository
        }

        enum HookKeys: String, CodingKey {
            case id
            case events
            case config
        }

        enum ConfigKeys: String, CodingKey {
            case contentType = "content_type"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            var hookID = try container.decodeIdentifierIfPresent(forKey: .hookID)
            var events: [String] = []
            var contentType: String?
            if container.contains(.hook), try !container.decodeNil(forKey: .hook) {
                let hook = try container.nestedContainer(keyedBy: HookKeys.self, forKey: .hook)
                hookID = try hookID ?? hook.decodeIdentifierIfPresent(forKey: .id)
                events = try hook.decodeIfPresent([String].self, forKey: .events) ?? []
                if hook.contains(.config), try !hook.decodeNil(forKey: .config) {
                    let config = try hook.nestedContainer(keyedBy: ConfigKeys.self, forKey: .config)
                    contentType = try config.decodeIfPresent(String.self, forKey: .contentType)
                }
            }
            event = PingEvent(
                zen: try container.decodeIfPresent(String.self, forKey: .zen),
                hookID: hookID,
                events: events,
                contentType: contentType,
                repository: try container.decodeIfPresent(WireRepository.self, forKey: .repository)?.repository
            )
        }
    }
}

extension KeyedDecodingContainer {
    /// A timestamp nothing depends on: absent, null, not a string or unparseable is nil.
    fileprivate func lenientTimestamp(forKey key: Key) -> UnixTime? {
        guard let text = try? decodeIfPresent(String.self, forKey: key) else { return nil }
        return GitHubTimestamp.parse(text)
    }

    /// An optional timestamp field: absent or null is nil, unparseable is an error naming the field.
    fileprivate func decodeTimestamp(forKey key: Key) throws -> UnixTime? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let time = GitHubTimestamp.parse(text) else {
            throw WebhookDecoder.FieldFormatError(
                codingPath: codingPath + [key], expected: "an ISO 8601 timestamp such as 2023-10-13T10:11:52Z"
            )
        }
        return time
    }

    fileprivate func decodeInteger(forKey key: Key) throws -> Int {
        do {
            return try decode(Int.self, forKey: key)
        } catch {
            throw integerError(error, forKey: key)
        }
    }

    fileprivate func decodeIntegerIfPresent(forKey key: Key) throws -> Int? {
        do {
            return try decodeIfPresent(Int.self, forKey: key)
        } catch {
            throw integerError(error, forKey: key)
        }
    }

    /// An id, attempt or number GitHub counts from 1: a whole number from 1 to 2^53 − 1 (GitHub's ids
    /// are JavaScript-safe integers). A signed payload holding `run_attempt: 0` or a negative id
    /// passed decoding once and then broke the store's `CHECK (attempt >= 1)` on every redelivery
    /// (answered 503, forever); refused here it is a 400 that names the field.
    fileprivate func decodeIdentifier(forKey key: Key) throws -> Int {
        try checkedIdentifier(decodeInteger(forKey: key), forKey: key)
    }

    /// `decodeIdentifier` for an optional field: absent or null is nil, out of range is an error.
    fileprivate func decodeIdentifierIfPresent(forKey key: Key) throws -> Int? {
        try decodeIntegerIfPresent(forKey: key).map { try checkedIdentifier($0, forKey: key) }
    }

    private func checkedIdentifier(_ value: Int, forKey key: Key) throws -> Int {
        guard WebhookDecoder.identifierRange.contains(value) else {
            throw WebhookDecoder.FieldFormatError(
                codingPath: codingPath + [key], expected: "a whole number from 1 to 9007199254740991"
            )
        }
        return value
    }

    /// A number that does not fit `Int` (`1.5`, `1e30`) must name its field. swift-corelibs-foundation
    /// throws an internal error here that `JSONDecoder` later reports as "not valid JSON" with no
    /// path, and Apple's Foundation a `dataCorrupted` error; both become a field error here. Missing,
    /// null and non-number values keep their `DecodingError`, which already carries the path.
    private func integerError(_ error: any Error, forKey key: Key) -> any Error {
        if let decodingError = error as? DecodingError {
            guard case .dataCorrupted = decodingError else { return decodingError }
        }
        return WebhookDecoder.FieldFormatError(
            codingPath: codingPath + [key], expected: "a whole number that fits in 64 bits"
        )
    }
}
