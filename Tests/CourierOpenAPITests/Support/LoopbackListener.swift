#if OpenAPI
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket bound to a free port of 127.0.0.1.
struct LoopbackListener {
    struct Unavailable: Error {}

    let descriptor: Int32
    let port: Int

    /// Binds a socket, listening when `listening` is set; a bound socket that does not listen
    /// refuses every connection.
    init(listening: Bool) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Unavailable() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound, !listening || listen(fd, 4) == 0 else {
            close(fd)
            throw Unavailable()
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// A port that refuses connections for the rest of the process: bound, never listening,
    /// never closed, so no other server can take it.
    static func refusingPort() throws -> Int {
        try LoopbackListener(listening: false).port
    }
}
#endif
