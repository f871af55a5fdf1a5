import WebhookServer

/// Which forge sent a delivery, told by its headers before anything else is read
/// (`../shared/spec/GITEA.md`, "forge detection"): Gitea sends `X-Gitea-Event` beside a copied
/// `X-GitHub-Event` and `X-Hub-Signature-256`, Forgejo `X-Forgejo-Event` as well, Gogs only its own.
/// A delivery is GitHub's only when none of them is present, so another forge's delivery is never
/// verified with a GitHub secret and then misread as GitHub's.
enum DeliveryForge: String, Sendable, Equatable {
    case github
    case gitea
    case forgejo
    case gogs

    init(_ request: HTTPRequest) {
        if request.header("x-forgejo-event") != nil {
            self = .forgejo
        } else if request.header("x-gitea-event") != nil {
            self = .gitea
        } else if request.header("x-gogs-event") != nil {
            self = .gogs
        } else {
            self = .github
        }
    }

    /// The forge's name, as a person reads it.
    var name: String {
        switch self {
        case .github: "GitHub"
        case .gitea: "Gitea"
        case .forgejo: "Forgejo"
        case .gogs: "Gogs"
        }
    }
}
