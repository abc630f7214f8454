#if CommandLine
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writing to the standard streams, and whether they are terminals.
enum StandardError {
    /// Writes `text` and a newline to stderr.
    static func line(_ text: String) {
        write(text + "\n")
    }

    /// Writes `text` to stderr as it is.
    static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Whether stderr is a terminal.
    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }
}

/// The standard output.
enum StandardOutput {
    /// Writes bytes to stdout.
    static func write(_ data: Data) {
        FileHandle.standardOutput.write(data)
    }

    /// Writes `text` to stdout as it is.
    static func write(_ text: String) {
        write(Data(text.utf8))
    }

    /// Whether stdout is a terminal.
    static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
}
#endif
