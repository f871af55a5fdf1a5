/// How a finished run's last frame reads and is coloured, by its conclusion.
public struct EndAppearance: Sendable, Equatable {
    /// iOS system grey: cancelled, superseded, skipped and neutral runs are not news.
    public static let grey = "#8E8E93"

    public var state: String
    public var accentColor: String
    /// Where the end frame's card opens instead of the run: the failing job's page; nil for the run.
    public var link: String?

    public init(state: String, accentColor: String) {
        self.state = state
        self.accentColor = accentColor
    }

    /// - Parameters:
    ///   - failedStep: the label of the first failed step, named on a failure.
    ///   - supersededBy: the run number (or id) of a newer run of the same workflow and branch,
    ///     for a cancelled run: GitHub's `cancel-in-progress` cancels the old run for it.
    public static func forConclusion(_ conclusion: String, failedStep: String?, supersededBy: Int?) -> EndAppearance {
        switch conclusion {
        case "success": EndAppearance(state: "Succeeded", accentColor: "green")
        case "failure":
            EndAppearance(state: failedStep.map { "Failed: \($0)" } ?? "Failed", accentColor: "red")
        case "cancelled":
            supersededBy.map { EndAppearance(state: "Superseded by #\($0)", accentColor: grey) }
                ?? EndAppearance(state: "Cancelled", accentColor: grey)
        case "timed_out": EndAppearance(state: "Timed out", accentColor: "red")
        case "startup_failure": EndAppearance(state: "Startup failure", accentColor: "red")
        case "action_required": EndAppearance(state: "Needs approval", accentColor: "orange")
        case "skipped": EndAppearance(state: "Skipped", accentColor: grey)
        case "neutral": EndAppearance(state: "Neutral", accentColor: grey)
        case "stale": EndAppearance(state: "Stale", accentColor: grey)
        default: EndAppearance(state: "Finished: \(conclusion)", accentColor: grey)
        }
    }
}
