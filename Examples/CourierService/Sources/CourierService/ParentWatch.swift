import Foundation
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Ends when standard input reaches end-of-file: a parent that starts the service with a pipe
/// as its standard input and keeps the write end stops it by closing the pipe, and the kernel
/// closes it when the parent dies, however it dies. Watched only when standard input is a pipe
/// or a socket: a terminal or `/dev/null` would end it at once or never.
struct ParentWatch: Service {
    static var standardInputIsPipe: Bool {
        var status = stat()
        guard fstat(STDIN_FILENO, &status) == 0 else { return false }
        let type = status.st_mode & S_IFMT
        return type == S_IFIFO || type == S_IFSOCK
    }

    func run() async throws {
        let closed = Once()
        // A blocking read has a thread of its own rather than one of the cooperative pool.
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 512)
            while true {
                let count = read(STDIN_FILENO, &buffer, buffer.count)
                if count == 0 || (count < 0 && errno != EINTR) { break }
            }
            closed.fire()
        }
        reader.start()
        // The group's graceful shutdown (SIGTERM) or its cancellation (another service failed)
        // ends the watch too; the reader thread then stays blocked until the process exits.
        await withTaskCancellationOrGracefulShutdownHandler {
            await closed.wait()
        } onCancelOrGracefulShutdown: {
            closed.fire()
        }
    }
}

/// An event that happens once; `wait()` returns once it has.
private final class Once: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state -> Bool in
                if !state.fired { state.waiters.append(continuation) }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}
