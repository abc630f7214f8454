import Courier
import Foundation
import HTTPTypes
import Testing

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
        let error = await #expect(throws: TransportError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/"))
        }
        let elapsed = ContinuousClock.now - start
        #expect(error?.kind == .timedOut)
        #expect(error?.message.lowercased().contains("connect") == true, "\(String(describing: error))")
        #expect(elapsed >= .milliseconds(400))
        #expect(elapsed < .seconds(5))  // the connect timeout, not the total one
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
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 0) == 0 else { throw SocketError(step: "bind/listen") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        var descriptors = [listener]
        // Backlog 0 holds one established connection; a few more fill the SYN side too.
        for _ in 0..<4 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
            }
            descriptors.append(filler)
        }
        self.descriptors = descriptors
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        for descriptor in descriptors { _ = Glibc.close(descriptor) }
    }
}
