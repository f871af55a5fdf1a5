import Foundation

// `make bench-scale` (bench/scale.py) fills its database with this: N finished runs through the
// daemon's own store path (see ScaleFill). Prints a JSON summary on standard output.
//
//   scale-fill --database PATH --templates FILE --runs N [--days 90] [--repos 300] [--end UNIX]
//              [--group 64] [--first-run 0] [--prune-every 600] [--sizes-csv FILE]
//
// --templates comes from `bench/gen.py --scale-templates FILE`. --sizes-csv writes the database
// and WAL size at the end of every simulated day (the "90 simulated days" mode is --days 90
// --runs 900000). --prune-every is in simulated seconds (600: the daemon's cadence; 0: never).

func option(_ name: String, _ arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let database = option("database", arguments), let templates = option("templates", arguments),
    let runs = option("runs", arguments).flatMap(Int.init), runs > 0
else {
    FileHandle.standardError.write(
        Data("usage: scale-fill --database PATH --templates FILE --runs N [--days D] [--repos R] [--end UNIX]\n".utf8))
    exit(2)
}
var options = ScaleFill.Options(database: database, templates: templates, runs: runs)
if let days = option("days", arguments).flatMap(Double.init) { options.days = days }
if let repositories = option("repos", arguments).flatMap(Int.init) { options.repositories = max(1, repositories) }
if let end = option("end", arguments).flatMap(Double.init) { options.end = end }
if let group = option("group", arguments).flatMap(Int.init) { options.groupSize = max(1, group) }
if let first = option("first-run", arguments).flatMap(Int.init) { options.firstRun = first }
if let every = option("prune-every", arguments).flatMap(Double.init) { options.pruneEvery = max(0, every) }
options.sizesCSV = option("sizes-csv", arguments)

do {
    var fill = try ScaleFill(options: options)
    let summary = try await fill.run()
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    encoder.outputFormatting = [.sortedKeys]
    FileHandle.standardOutput.write(try encoder.encode(summary) + Data("\n".utf8))
} catch {
    FileHandle.standardError.write(Data("scale-fill: \(error)\n".utf8))
    exit(1)
}
