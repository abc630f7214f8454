import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite struct RequestsResourceErrorTests {
    /// Published FNV-1a 64 test vectors: the algorithm is the standard one.
    @Test(arguments: [("", "cbf29ce484222325"), ("a", "af63dc4c8601ec8c"), ("foobar", "85944171f73967e8")])
    func fnv1a64MatchesThePublishedVectors(_ input: String, expected: String) {
        #expect(StableHash.hex(input) == expected)
    }

    /// Pinned values: a change of algorithm, canonical string or reason names fails here.
    @Test(arguments: [
        (CourierError.Kind.clientError, 404, HTTPRequest.Method.get, "/api/users/42", "d1303b81af35d6d5"),
        (.serverError, 503, .post, "/api/orders", "5121a038e2857bf3"),
        (.unexpectedStatus, 302, .delete, "/items/7", "832788d4c8ca103d"),
        (.undecodableBody, 200, .get, "/api/users", "4607b35e93554376"),
        (.clientError, 401, .get, "/é", "dffc4b6513beff0c"),
    ])
    func stableHashIsPinned(
        _ kind: CourierError.Kind,
        code: Int,
        method: HTTPRequest.Method,
        path: String,
        expected: String
    ) {
        let endpoint = ResponseEndpoint(method: method, target: path).description
        let error = CourierError(kind: kind, message: "", statusCode: code, endpoint: endpoint)
        #expect(error.stableHash == expected)
        #expect(error.parameters["hash"] == expected)
    }

    /// The same vectors, for errors made the way a caller meets them: `validate()` on a
    /// response the session tagged with its endpoint.
    @Test(arguments: [
        (404, HTTPRequest.Method.get, "/api/users/42", "d1303b81af35d6d5"),
        (503, .post, "/api/orders", "5121a038e2857bf3"),
        (302, .delete, "/items/7", "832788d4c8ca103d"),
        (401, .get, "/é", "dffc4b6513beff0c"),
    ])
    func validateGivesThePinnedHashes(code: Int, method: HTTPRequest.Method, path: String, expected: String) {
        var response = Response(head: HTTPResponse(status: HTTPResponse.Status(code: code)))
        response.endpoint = ResponseEndpoint(method: method, target: path)
        #expect {
            try response.validate()
        } throws: { error in
            let error = error as? CourierError
            return error?.stableHash == expected && error?.parameters["hash"] == expected
        }
    }

    @Test func anUndecodableBodyGivesThePinnedHash() {
        struct User: Decodable { let name: String }
        var response = Response(head: HTTPResponse(status: .ok), body: Response.Body(Data("[]".utf8)))
        response.endpoint = ResponseEndpoint(method: .get, target: "/api/users")
        #expect {
            try response.decode(User.self)
        } throws: { error in
            (error as? CourierError)?.stableHash == "4607b35e93554376"
        }
    }

    @Test func theQueryNeverReachesTheEndpointOrTheHash() {
        let plain = ResourceRequest(path: "/api/users/42").endpoint
        let withQuery = ResourceRequest(path: "/api/users/42?token=secret").endpoint
        let withParameters = ResourceRequest(path: "api/users/42", parameters: ["token": "secret"]).endpoint
        let absolute = ResourceRequest(path: "https://api.example.com:8443/api/users/42?token=secret").endpoint
        for endpoint in [plain, withQuery, withParameters, absolute] {
            #expect(endpoint.description == "GET /api/users/42")
        }
        var response = Response(head: HTTPResponse(status: .notFound))
        response.endpoint = withQuery
        #expect {
            try response.validate()
        } throws: { error in
            guard let error = error as? CourierError else { return false }
            return error.endpoint == "GET /api/users/42" && error.stableHash == "d1303b81af35d6d5"
                && !error.description.contains("secret") && !error.message.contains("secret")
                && !error.parameters.values.contains { $0.contains("secret") }
        }
    }

    @Test func parametersViewIsFlatAndComplete() {
        var response = Response(head: HTTPResponse(status: .serviceUnavailable))
        response.endpoint = ResponseEndpoint(method: .post, target: "/api/orders")
        let error = CourierError.status(of: response)
        #expect(error.kind == .serverError)
        #expect(
            error.parameters == [
                "reason": "server", "code": "503", "endpoint": "POST /api/orders", "hash": "5121a038e2857bf3",
            ]
        )
    }

    @Test(arguments: [
        (404, CourierError.Kind.clientError), (400, .clientError), (500, .serverError), (599, .serverError),
        (302, .unexpectedStatus), (101, .unexpectedStatus),
    ])
    func validateMapsStatusClasses(_ code: Int, kind: CourierError.Kind) {
        var response = Response(head: HTTPResponse(status: HTTPResponse.Status(code: code)))
        response.endpoint = ResponseEndpoint(method: .get, target: "/x")
        #expect(throws: CourierError(kind)) { try response.validate() }
        #expect {
            try response.validate()
        } throws: { error in
            guard let error = error as? CourierError else { return false }
            return error.statusCode == code && error.endpoint == "GET /x" && error.response?.statusCode == code
                && error.message.hasPrefix("GET /x answered \(code)")
        }
    }

    @Test func validateReturnsTheAcceptedResponse() throws {
        let response = Response(head: HTTPResponse(status: .noContent))
        #expect(try response.validate().statusCode == 204)
        let notModified = Response(head: HTTPResponse(status: .notModified))
        #expect(try notModified.validate(acceptableStatusCodes: 200...399).statusCode == 304)
    }

    @Test func errorsCompareByKind() {
        let a = CourierError(kind: .clientError, message: "a", statusCode: 404, endpoint: "GET /a")
        let b = CourierError(kind: .clientError, message: "b", statusCode: 409, endpoint: "PUT /b")
        #expect(a == b && a.kind == .clientError && a != CourierError(.serverError))
        #expect(Set([a, b]).count == 1)
    }
}
