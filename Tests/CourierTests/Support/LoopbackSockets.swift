import Foundation

/// Plain TCP sockets on 127.0.0.1 for the tests that need a port of their own.
enum LoopbackSockets {
    /// `127.0.0.1:port` as a `sockaddr_in` (port 0: any free port).
    static func address(port: Int = 0) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }

    /// Binds `fd` to 127.0.0.1 on a free port and returns that port, or `nil` on failure.
    static func bindToFreePort(_ fd: Int32) -> Int? {
        var address = address()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    /// Starts connecting `fd` to 127.0.0.1:`port`; returns whether `connect` succeeded at once.
    @discardableResult
    static func connect(_ fd: Int32, port: Int) -> Bool {
        var address = address(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` right now.
    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return connect(fd, port: port)
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
func freePort() throws -> Int {
    struct NoFreePort: Error {}
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw NoFreePort() }
    defer { close(fd) }
    guard let port = LoopbackSockets.bindToFreePort(fd) else { throw NoFreePort() }
    return port
}
