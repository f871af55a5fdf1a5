import BridgeCore
import BridgeDaemon
import BridgeStore
import Foundation

/// How the read-only commands find the database: `--database PATH`, else the configuration's
/// `database` (`--config PATH` or the default paths).
enum DatabaseAccess {
    static func open(_ parsed: ParsedArguments) -> Result<BridgeDatabase, ExitCode> {
        var path = parsed.options["database"]
        if path == nil {
            do throws(ExitCode) {
                path = try CLI.effectiveConfiguration(path: parsed.options["config"]).get().database
            } catch {
                return .failure(error)
            }
        }
        // Both branches above set it, or returned.
        let databasePath: String
        do throws(ConfigurationError) {
            switch try DatabaseLocation(parsing: path!) {
            case .sqlite(let file):
                databasePath = file
            case .postgresql(let uri):
                // Read-only on the server's side too (`default_transaction_read_only`).
                do throws(StoreOpenError) {
                    return .success(try BridgeDatabase(postgresURI: uri, readOnly: true))
                } catch {
                    CLI.error("\(DatabaseLocation.redacting(uri)): \(error.description)")
                    return .failure(.failure)
                }
            }
        } catch {
            CLI.error("configuration: \(error.description)")
            return .failure(.configuration)
        }
        guard FileManager.default.fileExists(atPath: databasePath) else {
            CLI.error("\(databasePath): no database there yet (the daemon creates it on its first start)")
            return .failure(.failure)
        }
        do throws(StoreOpenError) {
            return .success(try BridgeDatabase(path: databasePath, readOnly: true))
        } catch {
            CLI.error("\(databasePath): \(error.description)")
            return .failure(.failure)
        }
    }

    static func time(_ value: UnixTime?) -> String {
        guard let value else { return "-" }
        return Logger.timestamp(Date(timeIntervalSince1970: value))
    }
}
