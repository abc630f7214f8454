#if CommandLine
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Asking the operator for a secret on the terminal, with echo off.
enum Prompt {
    /// Reads one line from the terminal with echo off, after printing `prompt` on stderr.
    ///
    /// - Returns: The line, or `nil` when stdin is not a terminal (a secret is never read
    ///   from a pipe by surprise).
    static func secret(_ prompt: String) -> String? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        StandardError.write(prompt)
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            StandardError.write("\n")
        }
        return readLine(strippingNewline: true)
    }
}
#endif
