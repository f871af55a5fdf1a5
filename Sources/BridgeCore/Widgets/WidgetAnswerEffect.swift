/// What a widget answer meant, for the log.
public enum WidgetAnswerEffect: Sendable, Equatable {
    case acknowledged
    case recreating
    case quotaExhausted(until: UnixTime)
    case willRetry(at: UnixTime)
    case refused(String)
    case rejected(String)
}
