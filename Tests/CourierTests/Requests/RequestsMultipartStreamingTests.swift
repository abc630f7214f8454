import Crypto
import Foundation
import HTTPTypes
import Synchronization
import Testing

@testable import Courier

/// A 50 MiB file part streams from disk: the body is never held in memory.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RequestsMultipartStreamingTests {
    /// What nginx's `/echo` reports about the body it received.
    struct EchoSummary: Decodable {
        let method: String
        let length: Int
        let sha256: String
        let headers: [String: String]
    }

    /// The most the resident set may grow while 50 MiB are uploaded.
    static let growthLimit = 20 << 20

    @Test func fiftyMebibyteUploadStreamsWithFlatMemory() async throws {
        let env = try await TestServers.shared()
        let size = 50 << 20
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-50m-\(UUID().uuidString).bin")
            .path
        try Self.writeFile(atPath: path, size: size)
        defer { try? FileManager.default.removeItem(atPath: path) }

        let request = ResourceRequest(
            path: "/echo",
            method: .post,
            parameters: ["purpose": "streaming test"],
            multipartData: [.file(atPath: path, name: "blob", filename: "blob.bin")]
        )
        let expectedLength = try #require(try request.makeHTTPRequest().body?.length)

        // Other suites may allocate while this one uploads, so the growth is measured up to
        // three times and the smallest counts: an upload that buffered the file would grow
        // by 50 MiB or more every time.
        var smallestGrowth = Int.max
        var received: Response?
        for _ in 0..<3 where smallestGrowth >= Self.growthLimit {
            let session = SessionFactory.session(env, .http)
            let baseline = residentMemoryBytes()
            let peak = PeakSampler()
            let sampling = Task { await peak.run() }
            let response = try await session.send(request).validate()
            sampling.cancel()
            _ = await sampling.value
            smallestGrowth = min(smallestGrowth, max(peak.value, residentMemoryBytes()) - baseline)
            await session.shutdown()
            received = response
        }
        let response = try #require(received)

        let summary = try response.decode(EchoSummary.self)
        // Each translation draws a new boundary: take the one the server received.
        let contentType = try #require(summary.headers["content-type"])
        #expect(contentType.hasPrefix("multipart/form-data; boundary=courier-"))
        let boundary = String(contentType.dropFirst("multipart/form-data; boundary=".count))
        #expect(summary.method == "POST")
        #expect(summary.length == Int(expectedLength))
        #expect(summary.headers["content-length"] == String(expectedLength))
        let digest = try Self.expectedDigest(boundary: boundary, filePath: path)
        #expect(summary.sha256 == digest)
        #expect(
            smallestGrowth < Self.growthLimit,
            "resident memory grew by \(smallestGrowth >> 20) MiB while uploading 50 MiB"
        )
    }

    /// Writes `size` bytes in 1 MiB blocks, without holding the file in memory.
    static func writeFile(atPath path: String, size: Int) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var block = Data(count: 1 << 20)
        for index in 0..<(size >> 20) {
            block.withUnsafeMutableBytes { bytes in
                for offset in stride(from: 0, to: bytes.count, by: 4096) {
                    bytes[offset] = UInt8(truncatingIfNeeded: index &+ offset)
                }
            }
            try handle.write(contentsOf: block)
        }
    }

    /// The SHA-256 of the multipart body, computed from its documented layout, streaming the file.
    static func expectedDigest(boundary: String, filePath: String) throws -> String {
        var hasher = SHA256()
        let head =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nstreaming test\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"blob.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
        hasher.update(data: Data(head.utf8))
        let handle = try #require(FileHandle(forReadingAtPath: filePath))
        defer { try? handle.close() }
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        hasher.update(data: Data("\r\n--\(boundary)--\r\n".utf8))
        return hasher.finalize().hex
    }
}

/// Samples the resident set size every 10 ms and keeps the largest.
final class PeakSampler: Sendable {
    private let peak = Mutex(0)

    var value: Int { peak.withLock { $0 } }

    func run() async {
        while !Task.isCancelled {
            let current = residentMemoryBytes()
            peak.withLock { $0 = max($0, current) }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
