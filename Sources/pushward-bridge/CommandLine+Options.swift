/// Arguments split into positionals and `--name value` / `--flag` options, in any order.
struct ParsedArguments {
    /// The word taken off the front for a command whose subcommand comes first (`github hooks`).
    var subcommand: String?
    var positionals: [String] = []
    var options: [String: String] = [:]
    var flags: Set<String> = []

    /// - Parameter valued: the options that take a value; any other `--name` is a flag.
    init(_ arguments: [String], valued: Set<String>, flags allowed: Set<String>) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                positionals.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valued.contains(name) {
                if let inlineValue {
                    options[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                    options[name] = arguments[index]
                    index += 1
                }
            } else if allowed.contains(name), inlineValue == nil {
                flags.insert(name)
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }
}

/// A command line the program cannot act on: exit 64 with the message and a pointer to `--help`.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
