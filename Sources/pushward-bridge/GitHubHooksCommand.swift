import BridgeCore
import BridgeDaemon
import Foundation
import GitHubClient

/// `github hooks (--repo OWNER/NAME | --org ORG) [--config PATH] [--url URL] [--check] [--json]`:
/// makes the repository's or organisation's webhook what the bridge needs, with `github.api`'s
/// token or App, so nobody clicks it together by hand: created when missing, fixed where it is
/// wrong (and only there), left alone when right. `--check` only reads and reports.
enum GitHubHooksCommand {
    static let help = """
        Usage: pushward-bridge github hooks (--repo OWNER/NAME | --org ORG) [--config PATH] [--url URL]
                                            [--check] [--json]

        Makes the webhook of a repository (--repo) or organisation (--org) post what the bridge
        reads to URL (--url, else <public_url>/webhook), with github.api's token or GitHub App:
          - no hook posts to URL: creates one (active, events workflow_job and workflow_run,
            content type json, the first of github.webhook_secrets, TLS verified);
          - the hook is inactive, lacks one of the two events, posts a form, skips TLS checks or
            has no secret: fixes just that, keeping its other events (a fix of content type, TLS
            or secret sends the first webhook secret again, since GitHub replaces the whole config);
          - the hook is right: writes nothing and says so.

        --check writes nothing: it reports the hook, its problems and its recent deliveries, and
        exits 1 when there is a problem (no hook, one of the above, or a most recent delivery
        that failed). --json prints one JSON object (see the README) instead of sentences.

        Exit 0 when the hook is right (or was made right), 1 on a problem or when GitHub refused
        (a 403 or 404 names the permission the credential needs), 64 on a wrong command line,
        78 when the configuration lacks github.api, a secret or a URL.
        """

    /// `github hooks` in the CLI's table of commands (`help --json`, docs/cli.md). `hooks`, so far
    /// its only subcommand, comes first (`CLI.parse` checks it): `github` alone, or with another
    /// word, is a usage error, and `github --help` prints this command's help.
    static let spec = CommandSpec(
        name: "github", subcommands: ["hooks"], subcommandFirst: true, valued: ["config", "repo", "org", "url"],
        flags: ["check", "json"], help: help
    ) { parsed throws(ExitCode) in try run(parsed) }

    /// What the command was asked to do, once the command line and configuration are read.
    struct Request {
        var owner: HookOwner
        var url: String
        var secret: String?
        var check: Bool
        var json: Bool
    }

    static func run(_ parsed: ParsedArguments) throws(ExitCode) -> ExitCode {
        guard parsed.positionals.isEmpty else { return CLI.usage("github hooks takes no arguments", help: help) }
        let owner: HookOwner
        switch (parsed.options["repo"], parsed.options["org"]) {
        case (let repository?, nil):
            guard let value = HookOwner(repository: repository) else {
                return CLI.usage("--repo \(repository) is not OWNER/NAME", help: help)
            }
            owner = value
        case (nil, let organization?):
            guard let value = HookOwner(organization: organization) else {
                return CLI.usage("--org \(organization) is not an organisation name", help: help)
            }
            owner = value
        default:
            return CLI.usage("give either --repo OWNER/NAME or --org ORG", help: help)
        }
        let configuration = try CLI.effectiveConfiguration(path: parsed.options["config"]).get()
        let check = parsed.flags.contains("check")
        let prepared = try prepare(configuration, owner: owner, url: parsed.options["url"], check: check).get()
        let client = prepared.client
        let request = Request(
            owner: owner, url: prepared.url, secret: prepared.secret, check: check, json: parsed.flags.contains("json"))
        let outcome = CheckConfigCommand.blocking { await HookReport.make(request, client: client) }
        guard let outcome else { return .failure }
        print(request.json ? outcome.json.canonicalString : outcome.text)
        if let failure = outcome.failure { CLI.error(failure) }
        return outcome.succeeded ? .success : .failure
    }

    /// The client, the URL and the secret, or exit 78 (64 for a bad --url) naming what is missing.
    static func prepare(_ configuration: BridgeConfiguration, owner: HookOwner, url: String?, check: Bool)
        -> Result<(client: GitHubAPIClient, url: String, secret: String?), ExitCode>
    {
        guard let api = configuration.githubAPI else {
            CLI.error(
                "configuration: github.api: github hooks calls GitHub with github.api's token or App; add the "
                    + "section (see the README's recovery section)")
            return .failure(.configuration)
        }
        let credential: GitHubAPIClient.Credential
        switch api.credential {
        case .token(let token)?:
            credential = .token(token)
        case .app(let id, let file)?:
            do throws(ConfigurationError) {
                credential = .app(id: id, key: try ConfigurationLoader.appKey(file: file))
            } catch {
                CLI.error("configuration: \(error.description)")
                return .failure(.configuration)
            }
        case nil:
            CLI.error(
                "configuration: github.api: no credential to call GitHub with: set token (or PUSHWARD_GITHUB_TOKEN), "
                    + "or app_id with private_key_file")
            return .failure(.configuration)
        }
        let hookURL: String
        if let url {
            guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                ["https", "http"].contains(scheme), !(components.host ?? "").isEmpty
            else {
                return .failure(CLI.usage("--url \(url) is not an absolute http(s):// URL", help: help))
            }
            hookURL = url
        } else if let publicURL = configuration.publicURL {
            hookURL = publicURL + "/webhook"
        } else {
            CLI.error(
                "configuration: public_url: not set, and no --url given: set public_url to the address where GitHub "
                    + "reaches the webhook listener (the hook posts to <public_url>/webhook)")
            return .failure(.configuration)
        }
        var secret: String?
        if !check {
            guard let first = configuration.webhookSecrets.first else {
                CLI.error(
                    "configuration: github.webhook_secrets: no webhook secret configured: the hook must sign with one "
                        + "(or set PUSHWARD_WEBHOOK_SECRETS)")
                return .failure(.configuration)
            }
            if let problem = ConfigurationLoader.secretProblem(first, listen: configuration.listen) {
                CLI.error("configuration: github.webhook_secrets[0]: \(problem)")
                return .failure(.configuration)
            }
            secret = first
        }
        let client = GitHubAPIClient(baseURL: api.url, credential: credential, version: CLI.version)
        return .success((client, hookURL, secret))
    }
}
