#if CommandLine
import ArgumentParser
import Foundation

/// The `courier` command line: runs one command and exits with the code its outcome maps to.
///
/// The exit codes follow curl's where curl has one: 0 success, 2 bad usage, 7 no connection,
/// 22 an HTTP error with `--fail`, 28 a timeout, 35 a failed TLS handshake, 47 too many
/// redirects, 60 an unverified certificate, 90 a pin mismatch, 1 anything else.
public enum CourierCommandLine: Sendable {
    /// Runs the command given by the process's arguments and exits the process with its code.
    public static func main() async {
        let code = await run(Array(CommandLine.arguments.dropFirst()))
        exit(code)
    }

    /// Runs the command given by `arguments` (without the program name); returns its exit code.
    static func run(_ arguments: [String]) async -> Int32 {
        if asksForHelp(arguments) {
            // ArgumentParser prints the help of the command named and exits.
            await CourierRoot.main(arguments)
        }
        let command: any ParsableCommand
        do {
            command = try parse(arguments)
        } catch {
            let code = CourierRoot.exitCode(for: error)
            if code.isSuccess {
                // --help or --version: ArgumentParser prints them itself.
                CourierRoot.exit(withError: error)
            }
            StandardError.line("courier: " + CourierRoot.message(for: error))
            return ExitStatus.usage
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var command = command
                try command.run()
            }
            return ExitStatus.success
        } catch let failure as CommandFailure {
            if !failure.message.isEmpty { StandardError.line(failure.message) }
            return failure.code
        } catch {
            StandardError.line(ExitStatus.describe(error))
            return ExitStatus.code(for: error)
        }
    }

    /// Whether `arguments` ask for help: `help` first, or `-h`/`--help` before any `--`.
    static func asksForHelp(_ arguments: [String]) -> Bool {
        if arguments.first == "help" { return true }
        return arguments.prefix { $0 != "--" }.contains { $0 == "-h" || $0 == "--help" }
    }

    /// Parses `arguments` into a command, after rewriting the spellings ArgumentParser has no
    /// form for (`--timing=json`).
    static func parse(_ arguments: [String]) throws -> any ParsableCommand {
        try CourierRoot.parseAsRoot(rewrite(arguments))
    }

    /// `--timing=json` and `--timing=table` as the flags ArgumentParser parses.
    static func rewrite(_ arguments: [String]) -> [String] {
        var rewritten: [String] = []
        var afterTerminator = false
        for argument in arguments {
            if afterTerminator {
                rewritten.append(argument)
                continue
            }
            switch argument {
            case "--":
                afterTerminator = true
                rewritten.append(argument)
            case "--timing=json": rewritten.append("--timing-json")
            case "--timing=table": rewritten.append("--timing")
            default: rewritten.append(argument)
            }
        }
        return rewritten
    }
}
#endif
