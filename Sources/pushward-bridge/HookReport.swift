import BridgeCore
import Foundation
import GitHubClient

/// What `github hooks` found and did, as sentences or as its `--json` object. The JSON keys are
/// stable (the README documents them): `target`, `url`, `result` (`created`, `updated`,
/// `unchanged`, `checked`, `failed`), `ok`, `hook` (or null), `problems` (each `code` and
/// `message`, as found before any fix), `deliveries` (with `--check`), `error` (on a failure).
struct HookReport: Sendable {
    var target: String
    var url: String
    var result: String
    var hook: WebhookHook?
    var problems: [HookProblem] = []
    var deliveries: [HookDelivery]?
    /// Why GitHub gave no usable answer, said on stderr too.
    var failure: String?
    var failureStatus: Int?
    /// True when nothing is left to fix (or, with `--check`, nothing was found).
    var succeeded: Bool

    /// How many recent deliveries `--check` shows.
    static let recentDeliveries = 10

    static func make(_ request: GitHubHooksCommand.Request, client: GitHubAPIClient) async -> HookReport {
        var report = HookReport(
            target: request.owner.description, url: request.url, result: request.check ? "checked" : "unchanged",
            succeeded: false)
        do throws(GitHubAPIClient.Failure) {
            let hooks = try await client.hooks(of: request.owner)
            let plan = HookPlan(hooks: hooks, url: request.url, secret: request.secret ?? "")
            report.hook = plan.hook
            report.problems = plan.problems
            if request.check {
                if let hook = plan.hook {
                    let page = try await client.deliveries(of: request.owner.hook(id: hook.id))
                    let recent = Array(
                        page.deliveries.sorted { $0.deliveredAt > $1.deliveredAt }.prefix(recentDeliveries))
                    report.deliveries = recent
                    if let newest = recent.first, !newest.wasAccepted {
                        report.problems.append(.lastDeliveryFailed(status: newest.statusCode))
                    }
                }
                report.succeeded = report.problems.isEmpty
                return report
            }
            switch plan.action {
            case .none:
                report.succeeded = true
            case .create(let body):
                report.result = "created"
                report.hook = try await client.createHook(of: request.owner, body)
            case .update(let id, let body):
                report.result = "updated"
                report.hook = try await client.updateHook(of: request.owner, id: id, body)
            }
            if let written = report.hook, report.result != "unchanged" {
                // What GitHub answered, checked again: a write it took but did not apply is a problem.
                let left = HookPlan.problems(of: written)
                report.succeeded = left.isEmpty
                if !left.isEmpty {
                    report.failure =
                        "GitHub took the change but the hook still has problems: "
                        + left.map(\.description).joined(separator: "; ")
                }
            }
        } catch {
            report.result = "failed"
            report.failureStatus = error.status
            report.failure = explanation(error, owner: request.owner)
        }
        return report
    }

    /// A refusal in words that say what to change: a 403 or 404 is how GitHub answers a
    /// credential without the webhook permission (404 when it will not admit the repository
    /// exists to that credential).
    static func explanation(_ failure: GitHubAPIClient.Failure, owner: HookOwner) -> String {
        switch failure {
        case .forbidden, .notFound:
            "\(failure.description). The credential cannot read or change the webhooks of \(owner) (or it does not "
                + "exist): it needs \(owner.permissionNeeded); a GitHub App must also be installed on \(owner.account)"
        case .unauthorized:
            "\(failure.description). Check github.api's token (or the App's id and private key)"
        default:
            failure.description
        }
    }

    var json: JSONValue {
        var object: [String: JSONValue] = [
            "target": .string(target), "url": .string(url), "result": .string(result), "ok": .bool(succeeded),
            "hook": hook?.json ?? .null,
            "problems": .array(
                problems.map { ["code": .string($0.code), "message": .string($0.description)] }),
        ]
        if let deliveries {
            object["deliveries"] = .array(
                deliveries.map { delivery in
                    [
                        "id": .number(Double(delivery.id)), "guid": .string(delivery.guid),
                        "event": .string(delivery.event), "action": delivery.action.map { .string($0) } ?? .null,
                        "delivered_at": .string(GitHubTimestamp.format(delivery.deliveredAt)),
                        "status_code": .number(Double(delivery.statusCode)),
                        "redelivery": .bool(delivery.redelivery), "ok": .bool(delivery.wasAccepted),
                    ]
                })
        }
        if let failure {
            object["error"] = [
                "status": failureStatus.map { .number(Double($0)) } ?? .null, "message": .string(failure),
            ]
        }
        return .object(object)
    }

    /// The sentences, each line made safe for a terminal (hook URLs and events are GitHub's data,
    /// written by whoever administers the repository).
    var text: String {
        var lines: [String] = []
        let hookName = hook.map { "hook \($0.id)" } ?? "no hook"
        switch result {
        case "created": lines.append("\(target): created \(hookName) posting to \(url)")
        case "updated":
            lines.append("\(target): fixed \(hookName) posting to \(url)")
            lines += problems.map { "  fixed: \($0.description)" }
        case "unchanged": lines.append("\(target): \(hookName) posting to \(url) is right; nothing written")
        case "checked":
            if let hook {
                lines.append("\(target): hook \(hook.id) posts to \(url)")
                lines.append("  " + Self.summary(hook))
            } else {
                lines.append("\(target): no hook posts to \(url)")
            }
            lines.append(
                problems.isEmpty
                    ? "  problems: none"
                    : "  problems:\n"
                        + problems.map { "    - \($0.description)" }
                        .joined(separator: "\n"))
            if let deliveries {
                if deliveries.isEmpty {
                    lines.append("  recent deliveries: none yet")
                } else {
                    lines.append("  recent deliveries (newest first):")
                    for delivery in deliveries {
                        let event = delivery.event + (delivery.action.map { "." + $0 } ?? "")
                        let status = delivery.statusCode == 0 ? "no answer" : String(delivery.statusCode)
                        lines.append(
                            "    \(GitHubTimestamp.format(delivery.deliveredAt))  \(event)  \(status)"
                                + (delivery.wasAccepted ? "" : "  FAILED")
                                + (delivery.redelivery ? "  (redelivery)" : ""))
                    }
                }
            }
        default: lines.append("\(target): could not read or change the webhooks")
        }
        return lines.map {
            $0.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalText.sanitized(String($0)) }
                .joined(separator: "\n")
        }.joined(separator: "\n")
    }

    static func summary(_ hook: WebhookHook) -> String {
        [
            hook.active ? "active" : "inactive",
            "events: " + (hook.events.isEmpty ? "none" : hook.events.joined(separator: ", ")),
            "content type: " + (hook.contentType ?? "unset"),
            hook.insecureSSL == "0" ? "TLS verified" : "TLS not verified",
            hook.hasSecret ? "secret set" : "no secret",
        ].joined(separator: " · ")
    }
}
