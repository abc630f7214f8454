import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite struct RequestsMultipartTests {
    @Test func layoutFollowsRFC7578() throws {
        let parts: [MultipartPart] = [
            .text("value", name: "field"),
            .data(Data("abc".utf8), name: "upload", filename: "a \"b\"\r\n.txt", contentType: "text/plain"),
        ]
        let body = try MultipartBody(parts: parts, makeBoundary: { "BOUNDARY" })
        let expected =
            "--BOUNDARY\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n"
            + "--BOUNDARY\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a %22b%22%0D%0A.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nabc\r\n--BOUNDARY--\r\n"
        #expect(body.segments == [.data(Data(expected.utf8))])
        #expect(body.length == Int64(expected.utf8.count))
        #expect(body.contentType == "multipart/form-data; boundary=BOUNDARY")
    }

    @Test func aBoundaryFoundInTheContentIsDrawnAgain() throws {
        var draws = ["inside", "inside", "fresh"].makeIterator()
        let body = try MultipartBody(
            parts: [.text("the word inside is here", name: "f")],
            makeBoundary: { draws.next()! }
        )
        #expect(body.boundary == "fresh")
    }

    @Test func aBoundaryInAFieldNameIsDrawnAgain() throws {
        var draws = ["xyz", "fresh"].makeIterator()
        let body = try MultipartBody(parts: [.text("v", name: "axyzb")], makeBoundary: { draws.next()! })
        #expect(body.boundary == "fresh")
    }

    @Test func givingUpAfterTooManyCollisionsIsAnError() {
        #expect(throws: CourierError(.encodingFailed)) {
            try MultipartBody(parts: [.text("always", name: "f")], makeBoundary: { "always" })
        }
    }

    @Test func randomBoundariesAreLongAndDistinct() {
        let boundaries = (0..<100).map { _ in MultipartBody.randomBoundary() }
        #expect(Set(boundaries).count == 100)
        #expect(boundaries.allSatisfy { $0.count == 40 && $0.hasPrefix("courier-") })
    }

    @Test func parametersBecomeTextFieldsBeforeTheParts() async throws {
        let resource = ResourceRequest(
            path: "/upload",
            method: .post,
            parameters: ["album": "beach", "meta": ["year": 2024], "tags": ["a", "b"]],
            queryStringFormat: ResourceRequest.QueryStringFormat(arrayFormat: .commaSeparated),
            multipartData: [.data(Data([0, 1, 2]), name: "photo", filename: "p.bin")]
        )
        let (request, body) = try resource.makeHTTPRequest()
        let contentType = try #require(request.headerFields[.contentType])
        #expect(contentType.hasPrefix("multipart/form-data; boundary=courier-"))
        let boundary = String(contentType.dropFirst("multipart/form-data; boundary=".count))
        let data = try #require(try await body?.collect(upTo: 1 << 20))
        #expect(body?.length == Int64(data.count))
        let text = String(decoding: data, as: UTF8.self)
        let names = text.components(separatedBy: "form-data; name=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(names == ["album", "meta[year]", "tags", "photo"])
        #expect(text.contains("name=\"tags\"\r\n\r\na,b\r\n"))
        #expect(text.hasSuffix("--\(boundary)--\r\n"))
    }

    @Test func filePartsStreamInChunksWithAnExactLength() async throws {
        let size = MultipartBodySequence.chunkSize * 2 + 123
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-multipart-\(UUID().uuidString)"
        ).path
        let content = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try content.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let body = try MultipartBody(
            parts: [.text("t", name: "a"), .file(atPath: path, name: "f", contentType: "application/x-test")],
            makeBoundary: { "=_b_=" }
        )
        #expect(body.segments.count == 3)
        guard case .file(let filePath, let length) = body.segments[1] else {
            Issue.record("the file is not a segment of its own")
            return
        }
        #expect(filePath == path && length == Int64(size))

        var chunks: [Int] = []
        var collected = Data()
        for try await chunk in MultipartBodySequence(segments: body.segments) {
            chunks.append(chunk.count)
            collected.append(chunk)
        }
        #expect(chunks.max()! <= MultipartBodySequence.chunkSize)
        #expect(Int64(collected.count) == body.length)
        let filename = URL(fileURLWithPath: path).lastPathComponent
        let head =
            "--=_b_=\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nt\r\n--=_b_=\r\nContent-Disposition: form-data; name=\"f\"; filename=\"\(filename)\"\r\nContent-Type: application/x-test\r\n\r\n"
        #expect(collected == Data(head.utf8) + content + Data("\r\n--=_b_=--\r\n".utf8))

        let requestBody = body.requestBody()
        #expect(requestBody.isReplayable)
        #expect(requestBody.length == body.length)
        #expect(try await requestBody.collect(upTo: 1 << 30) == collected)
        #expect(try await requestBody.collect(upTo: 1 << 30) == collected)
    }

    @Test func aFileThatShrinksFailsTheUpload() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-shrink-\(UUID().uuidString)")
            .path
        try Data(count: 1000).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let body = try MultipartBody(parts: [.file(atPath: path, name: "f")], makeBoundary: { "=_b_=" })
        try Data(count: 10).write(to: URL(fileURLWithPath: path))
        await #expect(throws: CourierError(.unreadableFile)) {
            for try await _ in MultipartBodySequence(segments: body.segments) {}
        }
    }

    @Test func emptyFilesAreParts() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-empty-\(UUID().uuidString)")
            .path
        try Data().write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let body = try MultipartBody(parts: [.file(atPath: path, name: "f", filename: "e")], makeBoundary: { "=_b_=" })
        let data = try await body.requestBody().collect(upTo: 1 << 20)
        #expect(Int64(data.count) == body.length)
        #expect(String(decoding: data, as: UTF8.self).hasSuffix("\r\n\r\n\r\n--=_b_=--\r\n"))
    }
}
