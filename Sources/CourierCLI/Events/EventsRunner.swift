#if CommandLine
import Courier

/// Opens the stream of `courier events` and prints each event as it arrives, until the stream
/// ends, `--max-events` is reached, or a signal interrupts it.
struct EventsRunner {
    let command: EventsCommand

    func run() async throws {
        let plan = try EventsPlan(command: command)
        let transport = CurlTransport(configuration: plan.transport)
        let session = Session(configuration: plan.session, transport: transport)
        let stream = session.events(plan.request, configuration: plan.events, logger: plan.logger)
        let format = command.format
        let limit = command.maximumEvents
        let outcome: Result<Void, any Error>
        do {
            try await Interruption.cancelling {
                var printed = 0
                for try await event in stream {
                    StandardOutput.write(format.line(for: event))
                    printed += 1
                    if let limit, printed >= limit { return }
                }
            }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        // Closes the connection still open after --max-events.
        await session.shutdown()
        await transport.shutdown()
        do {
            try outcome.get()
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            let message = (error as? CourierError)?.message ?? "\(error)"
            throw CommandFailure(ExitStatus.code(for: error, statusFails: true), message)
        }
    }
}
#endif
