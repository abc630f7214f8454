import Courier
import CourierServiceLifecycle
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// Starts the service: `ResourceAccess` and the HTTP server run as services of one
/// `ServiceGroup`. On SIGTERM or SIGINT the group shuts down gracefully in reverse order: the
/// server stops accepting and finishes the requests it has, then `ResourceAccess` lets its
/// requests in flight finish and releases its connections.
///
/// Once listening, it prints one line to standard output, `READY port=<port>`; everything
/// else goes to standard error.
@main
struct CourierService {
    static func main() async {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "courier-service")
        logger.logLevel = .notice
        do {
            try await run(logger: logger)
        } catch {
            logger.critical("courier-service stopped: \(error)")
            exit(1)
        }
    }

    static func run(logger: Logger) async throws {
        let configuration = try ServiceConfiguration(
            arguments: Array(CommandLine.arguments.dropFirst()),
            environment: ProcessInfo.processInfo.environment
        )
        var accessConfiguration = configuration.access
        accessConfiguration.logger = logger
        let access = try ResourceAccess(configuration: accessConfiguration)

        let router = Router(context: ServiceRequestContext.self)
        Routes(access: access).add(to: router)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                FileHandle.standardOutput.write(Data("READY port=\(port)\n".utf8))
            },
            logger: logger
        )

        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: access), .init(service: app),
        ]
        if ParentWatch.standardInputIsPipe {
            // It returns when the parent has gone: then everything shuts down as on SIGTERM.
            services.append(.init(service: ParentWatch(), successTerminationBehavior: .gracefullyShutdownGroup))
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // A shutdown that hangs still ends: past these, the group cancels what is left, then
        // returns, and the process exits.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(20)
        groupConfiguration.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: groupConfiguration).run()
    }
}
