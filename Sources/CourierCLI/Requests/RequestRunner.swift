#if CommandLine
import Courier
import Foundation
import HTTPTypes
import Logging

/// Sends the request of a command and writes what came back: the head with `-i`, the body to
/// stdout or `-o`, the timings with `-w`, a progress bar on a terminal.
struct RequestRunner {
    let method: HTTPRequest.Method
    let options: RequestOptions

    func run() async throws {
        let plan = try RequestPlan(method: method, options: options)
        let transport = CurlTransport(configuration: plan.transport)
        var configuration = plan.session
        let logger = options.connection.verboseLogger
        if let logger { configuration.middlewares = [LoggingMiddleware(logger: logger)] }
        let session = Session(configuration: configuration, transport: transport)
        let outcome: Result<Response, any Error>
        do {
            outcome = .success(try await send(plan, session: session, logger: logger))
        } catch {
            outcome = .failure(error)
        }
        await session.shutdown()
        await transport.shutdown()
        try write(try outcome.get())
    }

    /// Sends through an observable task, drawing a progress bar from its events when stderr
    /// is a terminal.
    private func send(_ plan: RequestPlan, session: Session, logger: Logger?) async throws -> Response {
        let task = session.task(for: plan.request, body: plan.body, logger: logger)
        guard !options.noProgress, StandardError.isTerminal else { return try await task.value }
        let bar = ProgressBar()
        let drawing = Task {
            for await event in task.events {
                switch event {
                case .downloadProgress(let progress): bar.update(progress, direction: .download)
                case .uploadProgress(let progress): bar.update(progress, direction: .upload)
                case .stateChanged: break
                }
            }
        }
        defer { drawing.cancel() }
        do {
            let response = try await task.value
            // The last event may still be on its way: end with what arrived.
            let received = Int64(response.data.count)
            bar.finish(
                with: NetworkTask.Progress(
                    completedBytes: received,
                    expectedBytes: task.downloadProgress?.expectedBytes
                )
            )
            return response
        } catch {
            bar.finish(with: nil)
            throw error
        }
    }

    private func write(_ response: Response) throws {
        if options.timingJSON {
            StandardError.line(TimingReport(response: response).json)
        } else if options.timing {
            StandardError.write(TimingReport(response: response).table)
        }
        if options.fail, response.statusCode >= 400 {
            throw CommandFailure(
                ExitStatus.httpError,
                "the server answered \(response.statusCode) \(response.status.reasonPhrase)"
            )
        }
        if options.include || method == .head {
            StandardOutput.write(ResponseHead(response: response).text)
        }
        guard method != .head else { return }
        var body = response.data
        if options.json, options.output == nil, StandardOutput.isTerminal, let pretty = Self.prettyJSON(body) {
            body = pretty
        }
        if let output = options.output {
            do {
                try body.write(to: URL(fileURLWithPath: output))
            } catch {
                throw CommandFailure(
                    ExitStatus.failure,
                    "cannot write \(output.debugDescription): \(error.localizedDescription)"
                )
            }
        } else {
            StandardOutput.write(body)
        }
    }

    /// The body indented, when it is JSON; `nil` otherwise.
    static func prettyJSON(_ data: Data) -> Data? {
        guard let value = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            var pretty = try? JSONSerialization.data(
                withJSONObject: value,
                options: [.prettyPrinted, .withoutEscapingSlashes, .fragmentsAllowed]
            )
        else { return nil }
        pretty.append(UInt8(ascii: "\n"))
        return pretty
    }
}
#endif
