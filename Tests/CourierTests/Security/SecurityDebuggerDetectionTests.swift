import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Debugger detection: a tiny executable of the package (CourierSecurityProbe) sends one
/// secured request with detection on, once directly and once under a tracer.
@Suite(.timeLimit(.minutes(2)))
struct SecurityDebuggerDetectionTests {
    /// The probe, built next to the test bundle (the test target depends on it).
    private func probePath() throws -> String {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let path = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(
            "CourierSecurityProbe"
        ).path
        try #require(FileManager.default.isExecutableFile(atPath: path), "build the package first: \(path) is missing")
        return path
    }

    private func tracer() throws -> String {
        for candidate in ["/usr/bin/strace", "/bin/strace"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        try #require(Bool(false), "strace is missing: run scripts/bootstrap.sh")
        return ""
    }

    @Test func refusesSecuredRequestsUnderATracerAndSendsThemWithout() async throws {
        let env = try await TestServers.shared()
        let probe = try probePath()
        let strace = try tracer()

        let untracedMarker = SecuritySupport.uniquePath("/bytes/0")
        let untraced = try SecuritySupport.run(
            probe,
            [env.nginxHTTPS.absoluteString + untracedMarker, "sha256//" + env.rootPin, env.caBundle],
            allowFailure: true
        )
        #expect(untraced.status == 0, "\(untraced.output)")
        #expect(untraced.output.hasPrefix("OK 200"), "\(untraced.output)")
        try await SecuritySupport.waitForLogEntry(env, .https, containing: untracedMarker)

        let tracedMarker = SecuritySupport.uniquePath("/bytes/0")
        let traced = try SecuritySupport.run(
            strace,
            [
                "-f", "-qq", "-o", "/dev/null", probe, env.nginxHTTPS.absoluteString + tracedMarker,
                "sha256//" + env.rootPin, env.caBundle,
            ],
            allowFailure: true
        )
        #expect(traced.status == 3, "\(traced.output)")
        #expect(traced.output.hasPrefix("REFUSED debuggerAttached"), "\(traced.output)")
        try await SecuritySupport.expectNeverReached(env, .https, marker: tracedMarker)
    }

    @Test func readsTheTracerFromProcStatus() {
        func parse(_ text: String) -> Int32? { DebuggerDetection.tracer(in: ArraySlice(Array(text.utf8))) }
        #expect(parse("Name:\tx\nState:\tR\nTracerPid:\t0\nUid:\t0\n") == 0)
        #expect(parse("Name:\tx\nTracerPid:\t4242\nUid:\t0\n") == 4242)
        #expect(parse("Name:\tx\nTracerPid:\t42") == nil)  // cut off: not complete yet
        #expect(parse("Name:\tx\nUid:\t0\n") == nil)
        #expect(DebuggerDetection.tracerPID() == nil, "the test process itself is not traced")
    }

    @Test func detectionIsOffUnlessConfigured() throws {
        let policy = try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin])
        #expect(try SecurityConfiguration.secured(trust: [policy]).detectsDebugger == false)
        #expect(try SecurityConfiguration.secured(trust: [policy], detectsDebugger: true).detectsDebugger)
        #expect(SecurityConfiguration.unpinned.detectsDebugger == false)
    }
}
