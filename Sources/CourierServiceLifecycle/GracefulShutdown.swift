#if ServiceLifecycle
import ServiceLifecycle

/// Waits for the graceful shutdown of the service group, then runs `graceful`; when the task
/// is cancelled instead, runs `immediate`.
func untilGracefulShutdown(then graceful: () async -> Void, orWhenCancelled immediate: () async -> Void) async {
    do {
        try await gracefulShutdown()
    } catch {
        await immediate()
        return
    }
    await graceful()
}
#endif
