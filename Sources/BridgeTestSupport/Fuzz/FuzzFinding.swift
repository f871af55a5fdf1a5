/// What a fuzz check found wrong with one input: a thrown value rather than a trap, so the
/// regression tests can report it as a test failure while the fuzz harnesses turn it into a crash
/// (`fatalError`) that libFuzzer records with the input.
public struct FuzzFinding: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
