#if Postgres
public import ServiceLifecycle

/// A ``PostgresTokenStore`` runs as a service of a `ServiceGroup`: its connection pool runs
/// inside ``PostgresTokenStore/run()``. On the group's graceful shutdown the store refuses new
/// calls, lets those in flight finish (each ends within the operation timeout), then closes
/// its pool; list it before the services that use it, so that they stop first.
extension PostgresTokenStore: Service {
    /// Runs the store's connection pool until ``shutdown()`` or the group's graceful shutdown,
    /// then waits for the calls in flight and closes the pool; returns when it is closed.
    /// Cancelling the task closes the pool at once, failing the calls in flight.
    ///
    /// Calls made before `run()` starts wait for it, within the operation timeout. A store on a
    /// client you run yourself (``init(client:tableName:operationTimeout:keyProvider:logger:)``)
    /// serves calls without `run()`, and its `run()` leaves the client alone: it only waits for
    /// the calls in flight on the way out.
    ///
    /// A store shut down before it ran returns from `run()` at once, as a service told to stop
    /// before it started does.
    ///
    /// - Throws: ``/Courier/CourierError/Kind/shutDown`` when `run()` already ran (a store runs
    ///   once), ``/Courier/CourierError/Kind/invalidConfiguration`` when `run()` is already
    ///   running.
    public func run() async throws {
        guard try lifecycle.start() else { return }
        defer { lifecycle.finish() }
        // A group of its own, stopped in reverse order: the drain first, the pool once the
        // calls in flight are done. The pool, a service of this group, hears of the outer
        // group's graceful shutdown only through it, never before the drain ends.
        let drain = ServiceGroupConfiguration.ServiceConfiguration(
            service: Drain(lifecycle: lifecycle),
            successTerminationBehavior: .gracefullyShutdownGroup
        )
        let services = ownsClient ? [ServiceGroupConfiguration.ServiceConfiguration(service: client), drain] : [drain]
        try await ServiceGroup(configuration: ServiceGroupConfiguration(services: services, logger: logger)).run()
    }

    /// Stops the store and returns when its ``run()`` has returned, its pool closed: new calls
    /// are refused at once, those in flight finish first. Calls made after it throw
    /// ``/Courier/CourierError/Kind/shutDown``. A store that never ran is stopped at once;
    /// calling it again does nothing.
    public func shutdown() async {
        lifecycle.requestStop()
        await lifecycle.waitUntilStopped()
    }
}

/// The service of a store's own group that holds the pool open until a stop is asked for
/// (graceful shutdown, ``PostgresTokenStore/shutdown()``) and the calls in flight are done.
private struct Drain: Service {
    let lifecycle: StoreLifecycle

    func run() async {
        await withGracefulShutdownHandler {
            await lifecycle.waitForStopRequest()
        } onGracefulShutdown: { [lifecycle] in
            lifecycle.requestStop()
        }
        lifecycle.requestStop()
        await lifecycle.waitForDrain()
    }
}
#endif
