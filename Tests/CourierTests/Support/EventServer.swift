import Foundation

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the server-sent events server (`Tests/Servers/sse/server.py`) saw of the requests with
/// one `key` query parameter, from its `/stats`.
struct EventServerStats: Sendable, Decodable {
    /// Streaming requests that arrived (those answered 204 included).
    let connections: Int
    /// The `Last-Event-ID` header of each of them, in arrival order; `nil` where there was none.
    let lastEventIDs: [String?]
    /// Events written (a block with only `retry`, and heartbeat comments, are not events).
    let eventsSent: Int
    /// Connections closed on purpose without the end of the body (`drop_every`).
    let drops: Int
    /// Streams that ended cleanly after their last event.
    let completed: Int
    /// Requests answered 204 No Content.
    let noContent: Int
    /// Streams running now.
    let open: Int
    /// Streams the client closed before their end.
    let clientGone: Int
    /// The prompts that `POST /chat` received, in order.
    let chatPrompts: [String]

    private enum CodingKeys: String, CodingKey {
        case connections, drops, completed, open
        case lastEventIDs = "last_event_ids"
        case eventsSent = "events_sent"
        case noContent = "no_content"
        case clientGone = "client_gone"
        case chatPrompts = "chat_prompts"
    }
}

extension TestEnvironment {
    /// `sse` + `path` (which may hold a query), e.g. `"/events?count=3&key=K"`.
    func sseURL(_ path: String) -> URL {
        URL(string: sse.absoluteString + (path.hasPrefix("/") ? path : "/" + path))!
    }

    /// A session whose base URL is the server-sent events server (no proxy).
    func sseSession() -> Session {
        Session(configuration: .init(baseURL: sse), transport: CurlTransport(configuration: .init(proxy: .none)))
    }

    /// What the server-sent events server saw of the requests with `key`.
    func sseStats(key: String) async throws -> EventServerStats {
        let (data, _) = try await URLSession.shared.data(from: sseURL("/stats?key=\(key)"))
        return try JSONDecoder().decode(EventServerStats.self, from: data)
    }
}
