#if ServiceLifecycle
public import Courier
public import ServiceLifecycle

/// A ``/Courier/Session`` runs as a service of a `ServiceGroup`: it serves requests until the
/// group shuts down gracefully, then refuses new requests, lets those in flight finish for
/// up to ``/Courier/Session/Configuration/shutdownGracePeriod``, and cancels the rest.
///
/// ```swift
/// let session = Session(configuration: .init(baseURL: URL(string: "https://api.example.com")!))
/// let group = ServiceGroup(services: [session], logger: logger)
/// try await group.run()
/// ```
extension Session: Service {
    /// Waits for the graceful shutdown of the service group, then shuts the session down
    /// with its configured grace period; when the task is cancelled instead, shuts down at
    /// once.
    public nonisolated func run() async throws {
        await untilGracefulShutdown {
            await shutdown(gracePeriod: configuration.shutdownGracePeriod)
        } orWhenCancelled: {
            await shutdown()
        }
    }
}
#endif
