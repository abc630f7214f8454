import Courier
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
        (ResourceError.Kind.clientError, 404, ResourceRequest.Method.get, "/api/users/42", "d1303b81af35d6d5"),
        (.serverError, 503, .post, "/api/orders", "5121a038e2857bf3"),
        (.unexpectedStatus, 302, .delete, "/items/7", "832788d4c8ca103d"),
        (.undecodableBody, 200, .get, "/api/users", "4607b35e93554376"),
        (.clientError, 401, .get, "/é", "dffc4b6513beff0c"),
    ])
    func stableHashIsPinned(
        _ kind: ResourceError.Kind,
        code: Int,
        method: ResourceRequest.Method,
        path: String,
        expected: String
    ) {
        let error = ResourceError(kind: kind, statusCode: code, endpoint: ResourceEndpoint(method: method, path: path))
        #expect(error.stableHash == expected)
        #expect(error.parameters["hash"] == expected)
    }

    @Test func theQueryNeverReachesTheEndpointOrTheHash() {
        let plain = ResourceRequest(path: "/api/users/42").endpoint
        let withQuery = ResourceRequest(path: "/api/users/42?token=secret").endpoint
        let withParameters = ResourceRequest(path: "api/users/42", parameters: ["token": "secret"]).endpoint
        let absolute = ResourceRequest(path: "https://api.example.com:8443/api/users/42?token=secret").endpoint
        #expect(plain == withQuery && plain == withParameters && plain == absolute)
        #expect(plain.description == "GET /api/users/42")
        let error = ResourceError(kind: .clientError, statusCode: 404, endpoint: withQuery)
        #expect(error.stableHash == "d1303b81af35d6d5")
        #expect(!error.description.contains("secret"))
    }

    @Test func parametersViewIsFlatAndComplete() {
        let response = ResourceResponse(
            endpoint: ResourceEndpoint(method: .post, path: "/api/orders"),
            status: .serviceUnavailable
        )
        let error = ResourceError.status(of: response)
        #expect(error.kind == .serverError)
        #expect(
            error.parameters == [
                "reason": "server", "code": "503", "endpoint": "POST /api/orders", "hash": "5121a038e2857bf3",
            ]
        )
    }

    @Test(arguments: [
        (404, ResourceError.Kind.clientError), (400, .clientError), (500, .serverError), (599, .serverError),
        (302, .unexpectedStatus), (101, .unexpectedStatus),
    ])
    func validateMapsStatusClasses(_ code: Int, kind: ResourceError.Kind) {
        let response = ResourceResponse(
            endpoint: ResourceEndpoint(method: .get, path: "/x"),
            status: HTTPResponse.Status(code: code)
        )
        #expect(throws: ResourceError.kind(kind)) { try response.validate() }
    }

    @Test func validateReturnsTheAcceptedResponse() throws {
        let response = ResourceResponse(endpoint: ResourceEndpoint(method: .get, path: "/x"), status: .noContent)
        #expect(try response.validate().statusCode == 204)
        let notModified = ResourceResponse(endpoint: ResourceEndpoint(method: .get, path: "/x"), status: .notModified)
        #expect(try notModified.validate(acceptableStatusCodes: 200...399).statusCode == 304)
    }

    @Test func errorsCompareByKind() {
        let a = ResourceError(kind: .clientError, statusCode: 404, endpoint: ResourceEndpoint(method: .get, path: "/a"))
        let b = ResourceError(kind: .clientError, statusCode: 409, endpoint: ResourceEndpoint(method: .put, path: "/b"))
        #expect(a == b && a == .clientError && a != .serverError)
        #expect(Set([a, b]).count == 1)
    }
}
