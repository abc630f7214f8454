// The Swift floor: the least a Swift client of libcurl's multi interface can do per request,
// with the design Courier's transport uses and nothing else. One thread drives the multi
// handle and is also a `TaskExecutor`; the callers' tasks prefer it, so a completion resumes
// its caller on that thread without a hop to the cooperative pool. Per request: one
// continuation, one easy handle from a free list (created once, reused), body counted and
// discarded. No middleware, no buffering, no metrics, no error mapping.
//
// `--mode executor` (the default in the harness) runs the callers on the loop; `--mode send`
// resumes them on the global executor, as a caller that does not prefer the loop would be.
import CSwiftLoopCurl
import LoadClientSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

let options = LoadOptions.parse()
let loop = CurlLoop(options: options)
let executor: (any TaskExecutor)? = options.mode == "send" ? nil : loop

await LoadRunner.run(client: "swift-loop", options: options, executor: executor) {
    await withUnsafeContinuation { continuation in loop.start(continuation) }
}
loop.stop()
