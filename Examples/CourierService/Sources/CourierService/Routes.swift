import Courier
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

// Hummingbird and Courier both declare `Response`, `RequestBody` and `MediaType`, so this file
// names each with its module: `Courier.Response`, `Hummingbird.Response`. Bare names are a trap
// here, not only an error: Hummingbird re-exports its `Response` and `RequestBody` with scoped
// imports (`@_exported import struct HummingbirdCore.Response`), which shadow Courier's, so a
// bare `Response` silently means Hummingbird's; a bare `MediaType` is ambiguous and does not
// compile. Vapor's `Session`, `Response` and `Middleware` collide with Courier's too.
//
// Qualification fails when the importing module declares a type named like one of the modules
// (a type `Courier` or `Hummingbird`): `Courier.Response` then looks inside that type. A module
// selector, `Courier::Response`, always names the module.

/// The routes of the service. Its front door authenticates the caller and sets `X-User-ID`;
/// the service acts upstream for that user with the user's own tokens, kept by Courier.
///
/// | route | upstream |
/// |---|---|
/// | `POST /session` (`{"username": …, "password": …}`) | signs the user in |
/// | `DELETE /session` | signs the user out (tokens wiped and revoked) |
/// | `GET /profile` | `/api/user/profile`, with the user's token |
/// | `GET /download?bytes=N` | `/api/user/download?bytes=N`, with the user's token |
/// | `GET /device` | `/api/device/info`, with the service's device token |
/// | `GET /health` | none |
///
/// Every route that acts for a user takes the user from `X-User-ID` alone — signing in and out
/// included — so a caller can only ever act as the user its front door vouched for.
///
/// Upstream bodies are streamed through as they arrive, never collected: memory stays flat
/// however large the body, and a slow caller slows the upstream transfer down.
struct Routes: Sendable {
    let access: ResourceAccess

    static let userID = HTTPField.Name("X-User-ID")!

    /// What `POST /session` takes.
    struct Credentials: Decodable {
        let username: String
        let password: String
    }

    func add(to router: Router<ServiceRequestContext>) {
        router.get("/health") { _, _ in "ok\n" }

        router.post("/session") { request, context -> HTTPResponse.Status in
            let user = try Self.user(of: request)
            let credentials = try await request.decode(as: Credentials.self, context: context)
            do {
                try await access.userClient(for: user).authenticate(
                    username: credentials.username,
                    password: credentials.password
                )
            } catch let error as CourierError where error.kind == .grantRejected {
                throw HTTPError(.unauthorized, message: "wrong username or password")
            } catch let error as CourierError {
                throw Self.upstreamFailure(error, context: context)
            }
            return .noContent
        }

        router.delete("/session") { request, context -> HTTPResponse.Status in
            let report = await access.userClient(for: try Self.user(of: request)).logout()
            if !report.isComplete {
                // The tokens are gone from memory and the store whatever happened; only the
                // revocation at the authorization server may have failed.
                context.logger.warning("sign-out incomplete", metadata: ["failures": "\(report.failures.count)"])
            }
            return .noContent
        }

        router.get("/profile") { request, context -> Hummingbird.Response in
            let user = try Self.user(of: request)
            let upstream = try await Self.upstream(context: context) {
                try await access.userClient(for: user).streamAuthenticatedRequest(
                    ResourceRequest(path: "/api/user/profile"),
                    logger: context.logger
                )
            }
            return Self.passThrough(upstream, to: context.channel)
        }

        router.get("/download") { request, context -> Hummingbird.Response in
            let user = try Self.user(of: request)
            guard let bytes = request.uri.queryParameters.get("bytes", as: Int.self), bytes >= 0 else {
                throw HTTPError(.badRequest, message: "bytes must be a number of bytes")
            }
            let upstream = try await Self.upstream(context: context) {
                try await access.userClient(for: user).streamAuthenticatedRequest(
                    ResourceRequest(path: "/api/user/download", parameters: ["bytes": .int(bytes)]),
                    logger: context.logger
                )
            }
            return Self.passThrough(upstream, to: context.channel)
        }

        router.get("/device") { _, context -> Hummingbird.Response in
            let upstream = try await Self.upstream(context: context) {
                try await access.deviceClient.streamAnonymousRequest(
                    ResourceRequest(path: "/api/device/info"),
                    logger: context.logger
                )
            }
            return Self.passThrough(upstream, to: context.channel)
        }
    }

    /// The caller's user id, set by the front door.
    static func user(of request: Request) throws -> String {
        guard let user = request.headers[userID], !user.isEmpty else {
            throw HTTPError(.badRequest, message: "no \(userID) header")
        }
        return user
    }

    /// Runs an upstream request; a user who is not signed in becomes 401, any other failure 502.
    static func upstream(
        context: ServiceRequestContext,
        _ send: () async throws -> Courier.Response
    ) async throws -> Courier.Response {
        do {
            return try await send()
        } catch let error as CourierError where error.kind == .userNotAuthenticated {
            throw HTTPError(.unauthorized, message: "not signed in: POST /session first")
        } catch let error as CourierError {
            throw upstreamFailure(error, context: context)
        }
    }

    static func upstreamFailure(_ error: CourierError, context: ServiceRequestContext) -> HTTPError {
        context.logger.error("upstream failed", metadata: ["kind": "\(error.kind)", "error": "\(error)"])
        return HTTPError(.badGateway, message: "the upstream failed (\(error.kind))")
    }

    /// The upstream's status and content type, and its body streamed through chunk by chunk:
    /// each chunk is written to the caller before the next is read, so the upstream transfer
    /// goes only as fast as the caller reads.
    static func passThrough(_ upstream: Courier.Response, to channel: any Channel) -> Hummingbird.Response {
        var headers = HTTPFields()
        if let contentType = upstream.headerFields[.contentType] {
            headers[.contentType] = contentType
        }
        // Courier decodes a content-encoded body, so the upstream's length is the length of
        // what the caller gets only when the upstream sent it unencoded.
        var contentLength: Int?
        if upstream.headerFields[.contentEncoding] == nil, let length = upstream.headerFields[.contentLength] {
            contentLength = Int(length)
        }
        let body = upstream.body
        return Hummingbird.Response(
            status: upstream.status,
            headers: headers,
            body: ResponseBody(contentLength: contentLength) { writer in
                // Leaving the loop early (the caller went away) drops the body, which cancels
                // the upstream transfer.
                for try await chunk in body {
                    try await writer.write(ByteBuffer(bytes: chunk))
                    // The writer suspends only once the channel reports that it is not
                    // writable, which it learns on its event loop. A producer faster than that
                    // loop (a busy machine) queues chunk after chunk before the first report:
                    // tens of MiB of a fast upstream. A round trip through the loop after each
                    // chunk lets the report arrive first, so at most about one chunk waits.
                    try await channel.eventLoop.submit {}.get()
                }
                try await writer.finish(nil)
            }
        )
    }
}

/// The request context of the service: Hummingbird's basic context plus the connection's
/// channel, whose event loop paces the bodies streamed through.
struct ServiceRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
