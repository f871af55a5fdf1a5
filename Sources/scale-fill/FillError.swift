/// Why `scale-fill` cannot start: a message for the person running the benchmark.
struct FillError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
