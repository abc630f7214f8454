internal import CCurlShim
import Foundation
import HTTPTypes

/// The request body: where the read callback takes it from (loop thread).
extension CurlTransfer {
    /// Where the request body comes from.
    enum UploadSource {
        case memory(Data, offset: Int)
        case file(FileHandle)
        case stream(RequestBodyWriter, pump: Task<Void, Never>)
    }

    /// Opens the source the read callback takes the request body from.
    func prepareUpload(_ body: RequestBody) throws {
        running.uploadEnded = body.framedLength == 0
        running.uploadedBytes = 0
        switch body.storage {
        case .data(let data):
            running.upload = .memory(data, offset: 0)
        case .file(let path, _):
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw CourierError(kind: .requestBodyFailed, message: "cannot open \(ErrorText.file(path)) for reading")
            }
            running.upload = .file(handle)
        case .stream(_, _, _, let pump):
            let writer = RequestBodyWriter(limit: 256 << 10) { [weak self, loop] in
                guard let self else { return }
                loop.submit(.updatePause(self))
            }
            let task = Task {
                do {
                    try await pump(writer)
                    writer.finish()
                } catch {
                    writer.finish(throwing: error)
                }
            }
            running.upload = .stream(writer, pump: task)
        }
    }

    func closeUpload() {
        switch running.upload {
        case .file(let handle): try? handle.close()
        case .stream(let writer, let pump):
            writer.cancel(CancellationError())
            pump.cancel()
        case .memory, .none: break
        }
        running.upload = nil
    }

    /// Rewinds the request body for libcurl's own retries; `false` when it cannot.
    func rewindUpload(to offset: Int64) -> Bool {
        running.uploadEnded = false
        running.uploadedBytes = offset
        if running.stallWatched { watchForStalls() }  // the body goes out again: watch it again
        switch running.upload {
        case .memory(let data, _):
            guard offset >= 0, offset <= Int64(data.count) else { return false }
            running.upload = .memory(data, offset: Int(offset))
            return true
        case .file(let handle):
            return lseek(handle.fileDescriptor, off_t(offset), SEEK_SET) == off_t(offset)
        case .stream, .none:
            return false
        }
    }

    /// Fills curl's upload buffer: the read callback's answer.
    func readUpload(_ destination: UnsafeMutableRawBufferPointer) -> Int {
        let count = provideUpload(destination)
        if count == 0 {
            running.uploadEnded = true
        } else if count <= destination.count {
            if running.stallWatched { moved() } else { watchForStalls() }  // the upload began
            running.uploadedBytes += Int64(count)
            // libcurl asks no more once it has the announced length.
            if let length = body?.framedLength, running.uploadedBytes >= length { running.uploadEnded = true }
        }
        return count
    }

    /// Fills curl's upload buffer.
    private func provideUpload(_ destination: UnsafeMutableRawBufferPointer) -> Int {
        switch running.upload {
        case .memory(let data, let offset):
            let count = min(destination.count, data.count - offset)
            guard count > 0 else { return 0 }
            data.withUnsafeBytes { source in
                destination.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
            }
            running.upload = .memory(data, offset: offset + count)
            return count
        case .file(let handle):
            let count = read(handle.fileDescriptor, destination.baseAddress, destination.count)
            if count < 0 {
                running.failure = CourierError(
                    kind: .requestBodyFailed,
                    message: "reading the request body file failed: errno \(errno)"
                )
                return Int(ccurl_readfunc_abort())
            }
            return count
        case .stream(let writer, _):
            switch writer.read(into: destination) {
            case .bytes(let count): return count
            case .end: return 0
            case .wouldBlock:
                machine.sendPaused()
                return Int(ccurl_readfunc_pause())
            case .failed(let error):
                running.failure = CourierError(
                    kind: .requestBodyFailed,
                    message: "the request body stream failed: \(error)"
                )
                return Int(ccurl_readfunc_abort())
            }
        case .none:
            return 0
        }
    }
}

extension CurlTransfer {
    /// Fields that cannot be trailers: framing, routing, authentication, and what controls how
    /// the request is handled (a server could act on them after the body it already read).
    static let fieldsNotAllowedInTrailers: Set<HTTPField.Name> = [
        .contentLength, .transferEncoding, HTTPField.Name("Host")!, .authorization, .proxyAuthorization, .trailer, .te,
        .contentType, .contentEncoding, .contentRange, .expect, .cookie, .cacheControl, .maxForwards, .range,
        .connection, .upgrade, .userAgent, .proxyAuthenticate, .wwwAuthenticate, .setCookie, .idempotencyKey,
        HTTPField.Name("DPoP")!, HTTPField.Name("Forwarded")!, HTTPField.Name("Keep-Alive")!,
        HTTPField.Name("Proxy-Connection")!, HTTPField.Name("X-Forwarded-For")!, HTTPField.Name("X-Forwarded-Host")!,
        HTTPField.Name("X-Forwarded-Proto")!,
    ]

    /// Appends the request body's trailer fields to libcurl's list (which libcurl frees);
    /// `false` refuses them and fails the transfer, whose body then stays unfinished.
    func appendTrailers(to list: inout UnsafeMutablePointer<curl_slist>?) -> Bool {
        guard case .stream(let writer, _) = running.upload, let trailers = writer.trailers else { return true }
        for field in trailers {
            guard !Self.fieldsNotAllowedInTrailers.contains(field.name) else {
                running.failure = CourierError(
                    kind: .requestBodyFailed,
                    message: "\(field.name.rawName) cannot be a trailer field"
                )
                return false
            }
            guard let appended = curl_slist_append(list, "\(field.name.rawName): \(field.value)") else { return false }
            list = appended
        }
        return true
    }
}
