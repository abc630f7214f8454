import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The connect timeout, against a listener on 127.0.0.1 whose accept queue is full: Linux
/// drops further SYNs, so a connection attempt hangs as it would towards a black hole.
@Suite(.timeLimit(.minutes(1)))
struct ConnectTimeoutTests {
    @Test func aConnectionThatCannotBeEstablishedTimesOut() async throws {
        let listener = try FullListener()
        defer { listener.close() }
        let session = Session(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:\(listener.port)")!,
                connectTimeout: .milliseconds(500),
                timeout: .seconds(20)
            ),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let start = ContinuousClock.now
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/"))
        }
        let elapsed = ContinuousClock.now - start
        #expect(error?.kind == .connectTimedOut, "\(String(describing: error))")
        #expect(error?.message.lowercased().contains("connect") == true, "\(String(describing: error))")
        #expect(elapsed >= .milliseconds(400))
        #expect(elapsed < .seconds(5))  // the connect timeout, not the total one
        await session.shutdown()
    }

    /// The deadline passing while a connection is being made is the deadline's error.
    @Test func aDeadlineThatPassesWhileConnectingIsTimedOut() async throws {
        let listener = try FullListener()
        defer { listener.close() }
        let session = Session(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:\(listener.port)")!,
                connectTimeout: .seconds(20),
                timeout: .milliseconds(500)
            ),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/"))
        }
        #expect(error?.kind == .timedOut, "\(String(describing: error))")
        await session.shutdown()
    }
}

/// A listening socket that never accepts, with its accept queue filled by a few connections.
private struct FullListener {
    let port: Int
    private let descriptors: [Int32]

    init() throws {
        struct SocketError: Error { var step: String }
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard let port = LoopbackSockets.bindToFreePort(listener), listen(listener, 0) == 0 else {
            throw SocketError(step: "bind/listen")
        }
        var descriptors = [listener]
        // Backlog 0 holds one established connection; a few more fill the SYN side too.
        for _ in 0..<4 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            LoopbackSockets.connect(filler, port: port)
            descriptors.append(filler)
        }
        self.descriptors = descriptors
        self.port = port
    }

    func close() {
        for descriptor in descriptors { _ = Glibc.close(descriptor) }
    }
}
