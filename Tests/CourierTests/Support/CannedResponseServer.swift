import Foundation

/// A fault server on 127.0.0.1 for what real servers will not do on demand: every
/// connection gets the same bytes after its request head, then the connection closes.
final class CannedResponseServer: Sendable {
    let port: Int
    private let listener: Int32
    /// Signalled when the accept loop has ended; only then is the listener closed, so the
    /// loop never accepts on a descriptor number that a later server reuses.
    private let finished = DispatchSemaphore(value: 0)

    /// Starts serving `response` on a free port.
    init(response: Data) throws {
        struct CannotListen: Error {}
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0, let port = LoopbackSockets.bindToFreePort(fd), listen(fd, 16) == 0 else {
            if fd >= 0 { close(fd) }
            throw CannotListen()
        }
        self.listener = fd
        self.port = port
        let finished = self.finished
        let thread = Thread {
            defer { finished.signal() }
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }  // the listener was shut down
                Self.answer(connection, with: response)
            }
        }
        thread.start()
    }

    /// The URL of a path on this server.
    func url(_ path: String = "/") -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// Stops accepting connections, and returns once the accept loop has ended.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        finished.wait()
        close(listener)
    }

    private static func answer(_ connection: Int32, with response: Data) {
        defer { close(connection) }
        var head = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return }
            head.append(contentsOf: buffer[..<count])
        }
        response.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = send(connection, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { return }
                offset += sent
            }
        }
        shutdown(connection, Int32(SHUT_WR))
        while recv(connection, &buffer, buffer.count, 0) > 0 {}
    }
}
