/// A failure in test plumbing (a child that never started, a server that never answered).
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
