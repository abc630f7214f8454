#if OpenAPI
import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A one-request HTTP/1.1 server on 127.0.0.1 that reports when it has received the first
/// `threshold` bytes of a request body, then reads the rest and answers as nginx's `/echo`
/// does: JSON with the method, the body's length and its SHA-256.
///
/// An upload whose later chunks are made only after ``received(threshold:)`` returns proves
/// that the transport sent the first part before the body was complete.
final class GatedUploadServer: Sendable {
    let port: Int
    private let threshold: Int
    private let reached = AsyncStream<Void>.makeStream()

    init(threshold: Int) throws {
        let listener = try LoopbackListener(listening: true)
        port = listener.port
        self.threshold = threshold
        let signal = reached.continuation
        let thread = Thread {
            defer { close(listener.descriptor) }
            let connection = accept(listener.descriptor, nil, nil)
            guard connection >= 0 else { return signal.finish() }
            defer { close(connection) }
            Self.serve(connection, threshold: threshold, reached: { signal.yield() })
            signal.finish()
        }
        thread.start()
    }

    /// Returns once the server has received `threshold` body bytes (or the connection ended).
    func receivedThreshold() async {
        for await _ in reached.stream { return }
    }

    private static func serve(_ connection: Int32, threshold: Int, reached: () -> Void) {
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var pending: [UInt8] = []
        // The head: up to the blank line.
        var headEnd: Range<Int>?
        while headEnd == nil {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return }
            pending += buffer[0..<count]
            headEnd = pending.firstRange(of: Array("\r\n\r\n".utf8))
        }
        guard let headEnd else { return }
        let head = String(decoding: pending[..<headEnd.lowerBound], as: UTF8.self)
        let method = head.prefix { $0 != " " }
        let lengthLine = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
        let length = lengthLine.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        var hash = SHA256()
        var received = pending.count - headEnd.upperBound
        hash.update(data: pending[headEnd.upperBound...])
        var signalled = false
        while received < length {
            if !signalled && received >= threshold {
                signalled = true
                reached()
            }
            let count = recv(connection, &buffer, min(buffer.count, length - received), 0)
            guard count > 0 else { return }
            hash.update(data: buffer[0..<count])
            received += count
        }
        if !signalled { reached() }
        let digest = hash.finalize().map { String(format: "%02x", $0) }.joined()
        let json = #"{"method":"\#(method)","length":\#(received),"sha256":"\#(digest)"}"#
        let response =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n"
            + "Connection: close\r\n\r\n" + json
        _ = Array(response.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
    }
}
#endif
