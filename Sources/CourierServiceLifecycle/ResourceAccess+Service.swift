#if ServiceLifecycle
public import Courier
public import ServiceLifecycle

/// A ``/Courier/ResourceAccess`` runs as a service of a `ServiceGroup`: it serves requests
/// until the group shuts down gracefully, then refuses new requests, lets those in flight
/// finish for up to ``/Courier/ResourceAccess/Configuration/shutdownGracePeriod``, and cancels
/// the rest.
extension ResourceAccess: Service {
    /// Waits for the graceful shutdown of the service group, then shuts down with the
    /// configured grace period; when the task is cancelled instead, shuts down at once.
    public func run() async throws {
        await untilGracefulShutdown {
            await shutdown(gracePeriod: configuration.shutdownGracePeriod)
        } orWhenCancelled: {
            await shutdown()
        }
    }
}
#endif
