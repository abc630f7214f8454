import Foundation
import HTTPTypes
import Logging

/// The retry step of a session's chain: sends a request again as its ``RetryPolicy`` says,
/// within the session's ``RetryBudget``.
///
/// The session puts it after the leading ``LoggingMiddleware``s of its
/// ``Session/Configuration/middlewares`` — so the log shows one line per request, however
/// often it was sent — and before the rest (authorization, challenges), which see each attempt.
struct RetryMiddleware: Middleware {
    /// The policy of requests whose context names none: the session's.
    let policy: RetryPolicy
    /// The session's budget.
    let budget: RetryBudget
    /// Where retries and refusals of the budget are counted, if anywhere.
    var metrics: RetryMetrics? = nil

    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        let policy = policy(retrying: request, body: body, context: context)
        // The first attempt here, so that a request that is not retried costs this frame only;
        // one call of `next` for both kinds of request: each call site of an async function
        // that returns a response has the response's place in this frame.
        let first: Result<Response, any Error>
        do {
            let response = try await next(request, body, context)
            guard let policy, policy.retries(response.status) else { return response }
            first = .success(response)
        } catch {
            guard policy != nil else { throw error }
            first = .failure(error)
        }
        // Only a request with a policy gets here; the guard keeps the compiler sure of it.
        guard let policy else { return try first.get() }
        // Handed over, not kept: a dropped response must not outlive its retry in this frame.
        return try await retry(request, body: body, context: context, policy: policy, after: consume first, next: next)
    }

    /// The policy `request` is sent under when it may be sent again, counted in the budget
    /// when its policy retries at all; `nil` when it is sent once. Never inlined, so that its
    /// work stays out of the async frame every request in flight keeps.
    @inline(never)
    private func policy(retrying request: HTTPRequest, body: RequestBody?, context: MiddlewareContext) -> RetryPolicy? {
        let policy = context.retryPolicy ?? self.policy
        guard policy.maximumAttempts > 1 else { return nil }
        budget.recordRequest()
        return policy.allowsRetries(of: request, body: body) ? policy : nil
    }

    /// Sends the request again until it succeeds, the policy or the budget says stop, or the
    /// task is cancelled. Never inlined: its state would enlarge the frame that every request
    /// in flight holds, retried or not.
    ///
    /// - Parameter outcome: What the first attempt gave: a response with a retried status, or
    ///   an error.
    @inline(never)
    private func retry(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        policy: RetryPolicy,
        after outcome: consuming Result<Response, any Error>,
        next: Next
    ) async throws -> Response {
        var context = context
        var attempt = 1
        var generator = SystemRandomNumberGenerator()
        while true {
            let retry: RetryPolicy.Retry
            switch outcome {
            case .success(var response):
                response.attempts = attempt
                guard
                    let wanted = policy.retry(after: response.head, attempt: attempt, now: Date(), using: &generator),
                    admits(wanted, policy: policy, context: context)
                else { return response }
                retry = wanted
            case .failure(let error):
                if error is CancellationError || Task.isCancelled { throw error }
                guard let wanted = policy.retry(after: error, attempt: attempt, using: &generator),
                    admits(wanted, policy: policy, context: context)
                else { throw Self.recording(attempt, in: error) }
                retry = wanted
            }
            // The response goes (a streamed body with it, which ends its transfer) before the wait.
            outcome = .failure(CancellationError())
            context.logger.debug(
                "retrying \(request.method.rawValue) \(Redaction.url(of: request)) after \(retry.reason): attempt \(attempt + 1) of \(policy.maximumAttempts) in \(Redaction.milliseconds(retry.wait)) ms",
                metadata: ["courier.task": "\(context.taskID)", "courier.attempt": "\(context.attempt + 1)"]
            )
            try await Task.sleep(for: retry.wait)
            try Task.checkCancellation()
            attempt += 1
            context.attempt += 1
            do {
                outcome = .success(try await next(request, body, context))
            } catch {
                outcome = .failure(error)
            }
        }
    }

    /// Whether a retry the policy wants may be made: its wait ends before the request's
    /// deadline, and the budget has a retry left.
    private func admits(_ retry: RetryPolicy.Retry, policy: RetryPolicy, context: MiddlewareContext) -> Bool {
        if let deadline = context.options.deadline, ContinuousClock.now + retry.wait >= deadline { return false }
        guard budget.withdraw(ratio: policy.retryBudgetRatio, minimumPerSecond: policy.minimumRetriesPerSecond) else {
            metrics?.recordBudgetExhausted()
            return false
        }
        metrics?.recordRetry()
        return true
    }

    /// The error with the number of attempts recorded, when it is a ``CourierError``.
    private static func recording(_ attempts: Int, in error: any Error) -> any Error {
        guard attempts > 1, var error = error as? CourierError else { return error }
        error.attempts = attempts
        return error
    }
}
