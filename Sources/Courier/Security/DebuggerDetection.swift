#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds out whether a debugger or tracer (gdb, lldb, strace, …) is attached to the process.
///
/// On Linux, the kernel reports the tracer in `/proc/self/status` as `TracerPid:`; zero
/// means none. The file is read on every check, so a debugger that attaches later is seen
/// by the next request. A process that cannot read the file is treated as traced (fail
/// closed). On other systems detection is not implemented and reports no tracer.
enum DebuggerDetection {
    /// The process id of the tracer, or `nil` when none is attached.
    static func tracerPID() -> Int32? {
        #if os(Linux)
        let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return -1 }
        defer { close(descriptor) }
        // TracerPid is within the first few hundred bytes; keep reading until it is found.
        var buffer = [UInt8](repeating: 0, count: 4096)
        var length = 0
        while length < buffer.count {
            let count = buffer.withUnsafeMutableBytes { bytes in
                read(descriptor, bytes.baseAddress! + length, bytes.count - length)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            length += count
            if let pid = tracer(in: buffer[..<length]) { return pid == 0 ? nil : pid }
        }
        return -1  // no TracerPid line: cannot rule a tracer out
        #else
        return nil
        #endif
    }

    /// The value of a complete `TracerPid:` line, or `nil` when there is none yet.
    static func tracer(in status: ArraySlice<UInt8>) -> Int32? {
        let key = Array("\nTracerPid:".utf8)
        guard status.count > key.count else { return nil }
        var index = status.startIndex
        while index + key.count <= status.endIndex {
            if status[index] == key[0], status[index..<(index + key.count)].elementsEqual(key) {
                var cursor = index + key.count
                while cursor < status.endIndex, status[cursor] == 0x20 || status[cursor] == 0x09 { cursor += 1 }
                var value: Int32 = 0
                var digits = 0
                while cursor < status.endIndex, (0x30...0x39).contains(status[cursor]) {
                    value = value &* 10 &+ Int32(status[cursor] - 0x30)
                    digits += 1
                    cursor += 1
                }
                // Only a value ended by its newline is complete.
                guard digits > 0, cursor < status.endIndex, status[cursor] == 0x0A else { return nil }
                return value
            }
            index += 1
        }
        return nil
    }

    /// Throws ``CourierError/Kind/debuggerAttached`` when a tracer is attached.
    static func check() throws {
        guard let pid = tracerPID() else { return }
        throw CourierError(
            kind: .debuggerAttached,
            message: pid > 0
                ? "a debugger or tracer (process \(pid)) is attached; secured requests are refused while it is, and nothing was sent"
                : "cannot read /proc/self/status to rule out a debugger; secured requests are refused, and nothing was sent"
        )
    }
}
