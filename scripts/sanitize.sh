#!/usr/bin/env bash
# Builds the tests with a sanitizer in a scratch path of its own and runs the suites that
# exercise concurrency and object lifetimes: threads, the curl loop, shutdown, streaming.
#
#   scripts/sanitize.sh thread     # ThreadSanitizer (scripts/test.sh runs this)
#   scripts/sanitize.sh address    # AddressSanitizer: use-after-free, overflows, leaks at exit
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizer="${1:-thread}"
skip=()
case "$sanitizer" in
  thread) export TSAN_OPTIONS="halt_on_error=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}" ;;
  address)
    export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    # AddressSanitizer's shadow memory and quarantine make resident-memory bounds meaningless.
    skip=(--skip 'WithFlatMemory')
    ;;
  *) echo "sanitize: thread or address, not $sanitizer" >&2; exit 2 ;;
esac
# (Suites that measure timing to the millisecond, such as StallTimeoutPrecisionTests, stay out:
# a sanitizer slows every thread.)
suites='SessionTests|ResponseHeadTests|NetworkTaskTests|OriginQueueTests|EasyHandleReuseTests|ReceiveBufferTests|StreamingTests|EventStreamDeliveryTests|TransportIntegrationTests|MiddlewareTests|HTTP2Tests|SecurityPinningTests|TrustRotationTests|PinAuditTests|AuthBroker|AuthClient|AuthTokenStore|TokenStoreKeyRotation|AuthSharedStore|AuthFileStoreSharing|Concurrency|LoopShutdownTests|RedirectTests|TimeoutTests|ServiceLifecycleTests|ObservabilityTracingTests|TransferStateMachineTests|TransportExecutorTests|FullDuplexTests|TrailerTests|RefusedStreamTests|MalformedResponseTests|SQLiteStore|EventStreamTests|CookieSessionTests|CacheIntegrationTests'
swift build --build-tests --enable-all-traits --sanitize="$sanitizer" --scratch-path ".build-$sanitizer"
swift test --skip-build --enable-all-traits --sanitize="$sanitizer" --scratch-path ".build-$sanitizer" --no-parallel \
  --filter "$suites" "${skip[@]}"
