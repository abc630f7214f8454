import Courier
import Foundation

/// A session, so that the consumer uses the product it depends on.
func makeSession() -> Session {
    Session(configuration: .init(baseURL: URL(string: "https://api.example.com")!))
}
