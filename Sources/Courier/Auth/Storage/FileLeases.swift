import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The leases of an ``EncryptedFileTokenStore``: one file per key, `<store>.lease.<hash>`,
/// locked with `flock` by the holder's open descriptor, with `<expiry> <holder>` written in it.
///
/// Every method runs with the store's ``PathLock`` held, so taking over a lease (unlink,
/// create, lock) is atomic against the other processes. A lock belongs to the open file, so
/// two store instances of one process exclude each other like two processes do.
final class FileLeases: Sendable {
    private let storePath: String
    /// The descriptors of the leases this instance holds, by holder.
    private let held = LockedBox<[String: Int32]>([:])

    init(storePath: String) {
        self.storePath = storePath
    }

    deinit {
        held.withLock { held in
            for fd in held.values { close(fd) }
        }
    }

    /// The lease file of `key`: the store's path and the first 16 hex digits of the SHA-256
    /// of the key's description (no user id in a file name).
    func path(for key: TokenStoreKey) -> String {
        let digest = SHA256.hash(data: Data(key.description.utf8))
        return storePath + ".lease." + digest.prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// Takes the lease on `key`, or `nil` while a holder has it and its expiry has not passed.
    func acquire(for key: TokenStoreKey, duration: Duration) throws -> TokenStoreLease? {
        let file = path(for: key)
        var fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ioError("cannot open the lease file") }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let busy = errno == EWOULDBLOCK
            let expiry = busy ? Self.expiry(of: fd) : nil
            close(fd)
            guard busy else { throw ioError("cannot lock the lease file") }
            guard let expiry, expiry < Date() else { return nil }
            // Held past its expiry by a process that is alive but stuck: a new file takes the
            // name; the stuck holder's lock stays on the unlinked one.
            unlink(file)
            fd = open(file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw ioError("cannot create the lease file") }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                return nil
            }
        }
        let lease = TokenStoreLease(
            key: key,
            holder: UUID().uuidString,
            expiresAt: Date().addingTimeInterval(duration.inSeconds)
        )
        let record = Array("\(lease.expiresAt.timeIntervalSince1970) \(lease.holder)\n".utf8)
        let written = record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard ftruncate(fd, off_t(record.count)) == 0, written == record.count else {
            let error = ioError("cannot write the lease file")
            close(fd)
            throw error
        }
        held.withLock { $0[lease.holder] = fd }
        return lease
    }

    /// Unlocks and closes the lease's file, if this instance holds it.
    func release(_ lease: TokenStoreLease) {
        guard let fd = held.withLock({ $0.removeValue(forKey: lease.holder) }) else { return }
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// The expiry written in a lease file; `nil` when it cannot be read.
    private static func expiry(of fd: Int32) -> Date? {
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        guard let first = text.split(separator: " ").first, let seconds = Double(first) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    private func ioError(_ what: String) -> CourierError {
        CourierError(
            kind: .tokenStoreIOFailure,
            message: "\(what): \(String(cString: strerror(errno)))",
            path: storePath
        )
    }
}
