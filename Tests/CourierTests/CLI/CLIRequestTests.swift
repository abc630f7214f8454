#if CommandLine
import Foundation
import Testing

/// `courier get|head|post|…` run as a process against the suite's nginx and httpbin: what it
/// prints, what it writes, and what the server received.
@Suite(.timeLimit(.minutes(1)))
struct CLIRequestTests {
    private struct Echo: Decodable {
        let method: String
        let headers: [String: String]
        let length: Int
        let sha256: String
    }

    @Test func getWritesTheBodyToStdoutAndOutputFile() async throws {
        let env = try await TestServers.shared()
        let file = env.file("1k")
        let url = env.url(.https, file.urlPath).absoluteString

        let printed = try await CLIProcess.run(["get", url, "--cacert", env.caBundle])
        #expect(printed.status == 0, "\(printed)")
        #expect(printed.standardOutput.sha256Hex == file.sha256)
        #expect(printed.standardError.isEmpty)

        let output = try CLIProcess.temporaryFile("body", contents: Data())
        let written = try await CLIProcess.run(["get", url, "--cacert", env.caBundle, "-o", output])
        #expect(written.status == 0, "\(written)")
        #expect(written.standardOutput.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)).sha256Hex == file.sha256)
    }

    @Test func helpListsTheExitCodes() async throws {
        let outcome = try await CLIProcess.run(["--help"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output.contains("EXIT CODES"))
        #expect(outcome.output.contains("90  the server's chain holds none of the --pin keys"))
        let get = try await CLIProcess.run(["get", "--help"])
        #expect(get.status == 0, "\(get)")
        #expect(get.output.contains("--max-redirs"))
    }

    @Test func postSendsDataFromAFileAndFromStdin() async throws {
        let env = try await TestServers.shared()
        let body = Data((0..<5000).map { UInt8($0 % 251) })
        let path = try CLIProcess.temporaryFile("upload.bin", contents: body)
        let url = env.url(.http, "/echo").absoluteString

        let fromFile = try await CLIProcess.run(["post", url, "-d", "@\(path)"])
        #expect(fromFile.status == 0, "\(fromFile)")
        let echo = try JSONDecoder().decode(Echo.self, from: fromFile.standardOutput)
        #expect(echo.method == "POST")
        #expect(echo.length == body.count)
        #expect(echo.sha256 == body.sha256Hex)

        let fromStdin = try await CLIProcess.run(["put", url, "--data", "@-"], input: body)
        #expect(fromStdin.status == 0, "\(fromStdin)")
        let stdinEcho = try JSONDecoder().decode(Echo.self, from: fromStdin.standardOutput)
        #expect(stdinEcho.method == "PUT")
        #expect(stdinEcho.sha256 == body.sha256Hex)
    }

    @Test func jsonAndHeaderOptionsReachTheServer() async throws {
        let env = try await TestServers.shared()
        let outcome = try await CLIProcess.run([
            "patch", env.url(.https, "/echo").absoluteString, "--cacert", env.caBundle,
            "--json", "-d", #"{"name":"courier"}"#, "-H", "X-Operator: ada",
        ])
        #expect(outcome.status == 0, "\(outcome)")
        let echo = try JSONDecoder().decode(Echo.self, from: outcome.standardOutput)
        let headers = Dictionary(echo.headers.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
        #expect(echo.method == "PATCH")
        #expect(headers["content-type"] == "application/json")
        #expect(headers["accept"] == "application/json")
        #expect(headers["x-operator"] == "ada")
        #expect(echo.sha256 == Data(#"{"name":"courier"}"#.utf8).sha256Hex)
    }

    @Test func formSendsMultipartFieldsAndFiles() async throws {
        let env = try await TestServers.shared()
        let path = try CLIProcess.temporaryFile("notes.txt", contents: Data("file contents\n".utf8))
        let outcome = try await CLIProcess.run([
            "post", env.url(.http, "/httpbin/post").absoluteString, "-F", "name=courier", "-F", "upload=@\(path)",
        ])
        #expect(outcome.status == 0, "\(outcome)")
        struct Posted: Decodable {
            let form: [String: String]
            let files: [String: String]
        }
        let posted = try JSONDecoder().decode(Posted.self, from: outcome.standardOutput)
        #expect(posted.form["name"] == "courier")
        #expect(posted.files["upload"] == "file contents\n")
    }

    @Test func includeAndHeadPrintTheResponseHead() async throws {
        let env = try await TestServers.shared()
        let url = env.url(.http, "/bytes/1k").absoluteString
        let included = try await CLIProcess.run(["get", "-i", url])
        #expect(included.status == 0, "\(included)")
        let text = String(decoding: included.standardOutput.prefix(400), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"))
        #expect(text.contains("\r\nContent-Length: 1024\r\n") || text.contains("\r\ncontent-length: 1024\r\n"))
        #expect(included.standardOutput.count > 1024)

        let head = try await CLIProcess.run(["head", url])
        #expect(head.status == 0, "\(head)")
        #expect(head.output.hasPrefix("HTTP/1.1 200"))
        #expect(head.output.hasSuffix("\r\n\r\n"))
    }

    @Test func failTurnsAnErrorStatusIntoExitCode22() async throws {
        let env = try await TestServers.shared()
        let url = env.url(.http, "/httpbin/status/404").absoluteString
        let failing = try await CLIProcess.run(["get", "--fail", url])
        #expect(failing.status == 22, "\(failing)")
        #expect(failing.standardOutput.isEmpty)
        #expect(failing.errorLines.count == 1)
        #expect(failing.standardError.contains("404"))

        let plain = try await CLIProcess.run(["get", url])
        #expect(plain.status == 0, "\(plain)")
    }

    @Test func redirectsAreFollowedOnlyWithLocation() async throws {
        let env = try await TestServers.shared()
        let url = env.url(.https, "/redirect/same-origin").absoluteString
        let stopped = try await CLIProcess.run(["get", "-i", url, "--cacert", env.caBundle])
        #expect(stopped.status == 0, "\(stopped)")
        #expect(stopped.output.hasPrefix("HTTP/2 302"))

        let followed = try await CLIProcess.run(["get", "-L", url, "--cacert", env.caBundle, "--timing=json"])
        #expect(followed.status == 0, "\(followed)")
        #expect(followed.output.contains("\"headers\""))
        let timing = try #require(
            JSONSerialization.jsonObject(with: Data(followed.standardError.utf8)) as? [String: Any]
        )
        #expect(timing["redirects"] as? Int == 1)
    }

    @Test func verboseLogsTheExchangeWithoutSecrets() async throws {
        let env = try await TestServers.shared()
        let outcome = try await CLIProcess.run([
            "get", "-v", env.url(.http, "/httpbin/headers").absoluteString,
            "-H", "Authorization: Bearer SECRET-TOKEN-1234", "-H", "Cookie: session=SECRET-COOKIE-5678",
        ])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output.contains("SECRET-TOKEN-1234"), "the server got the header")
        #expect(outcome.standardError.contains("GET"))
        #expect(!outcome.standardError.contains("SECRET-TOKEN"))
        #expect(!outcome.standardError.contains("SECRET-COOKIE"))
    }

    @Test func proxyAndHTTP1OptionsAreHonoured() async throws {
        let env = try await TestServers.shared()
        let proxy = try #require(env.proxy)
        let marker = "/httpbin/get?cli-proxy=\(UUID().uuidString)"
        let proxied = try await CLIProcess.run([
            "get", env.url(.http, marker).absoluteString, "-x", proxy.absoluteString,
        ])
        #expect(proxied.status == 0, "\(proxied)")
        #expect(try env.proxyLogEntries().contains { $0.target.contains(marker) })

        let http1 = try await CLIProcess.run([
            "get", "--http1.1", env.url(.https, "/bytes/0").absoluteString, "--cacert", env.caBundle, "--timing=json",
        ])
        #expect(http1.status == 0, "\(http1)")
        #expect(http1.standardError.contains("\"http_version\":\"HTTP/1.1\""))
    }
}
#endif
