/// An integration key belongs to a person or to an organisation: only the second may send
/// `target` (a personal key gets 422 for any, as PushWard answers). Its own file, without the HTTP
/// server, so the in-memory PushWard builds into the fuzz targets too.
public enum FakeKeyKind: Sendable {
    case personal
    case organisation
}
