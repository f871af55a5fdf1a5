/// The exit codes of every command (sysexits.h where one fits).
enum ExitCode: Int32, Error {
    case success = 0
    case failure = 1
    /// EX_USAGE: the command line is wrong.
    case usage = 64
    /// EX_CONFIG: the configuration is wrong.
    case configuration = 78
}
