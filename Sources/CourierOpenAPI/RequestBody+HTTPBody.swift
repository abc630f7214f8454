#if OpenAPI
import Courier
import Foundation
import OpenAPIRuntime

extension RequestBody {
    /// A body that streams the chunks of `body` as the transfer asks for them.
    ///
    /// A body the generated client can iterate again becomes a replayable body, which a
    /// retry or a restarted request may send anew; a single-pass body is sent once at most.
    init(streaming body: HTTPBody) {
        let length: Int64? =
            switch body.length {
            case .known(let length): length
            case .unknown: nil
            }
        switch body.iterationBehavior {
        case .multiple: self = .generated(length: length) { HTTPBodyChunks(body: body) }
        case .single: self = .stream(HTTPBodyChunks(body: body), length: length)
        }
    }
}

/// The chunks of an `HTTPBody` as `Data`, the element of Courier's request bodies.
struct HTTPBodyChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let body: HTTPBody

    func makeAsyncIterator() -> Iterator {
        Iterator(chunks: body.makeAsyncIterator())
    }

    /// Reads the next chunk of the body when the transfer asks for one.
    struct Iterator: AsyncIteratorProtocol {
        var chunks: HTTPBody.Iterator

        mutating func next() async throws -> Data? {
            guard let chunk = try await chunks.next() else { return nil }
            return Data(chunk)
        }
    }
}
#endif
