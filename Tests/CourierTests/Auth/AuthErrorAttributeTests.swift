import Testing

@testable import Courier

/// What the auth layer and the clients record on a ``CourierError`` — the level, the server's
/// error response, the kind of request — reads back through the public properties and shows
/// in the description and the parameters as it always did, in the same order whatever order
/// the layers record it in.
struct AuthErrorAttributeTests {
    private static func rejected() -> CourierError {
        CourierError(
            kind: .grantRejected,
            message: "the password was wrong",
            level: .user,
            oauthError: OAuth2Error(code: .invalidGrant, errorDescription: "bad credentials"),
            statusCode: 400,
            endpoint: "POST /oauth/token"
        )
    }

    @Test func anErrorShowsTheKindOfRequestTheLevelAndTheServersErrorInTheirPlaces() {
        let error = Self.rejected().with(requestKind: .authenticated)
        #expect(error.requestKind == .authenticated)
        #expect(error.level == .user)
        #expect(error.oauthError?.code == .invalidGrant)
        #expect(
            error.description
                == "CourierError.grantRejected (authenticated request, level user, POST /oauth/token, status 400): "
                + "the password was wrong [invalid_grant: bad credentials]"
        )
        let parameters = error.parameters
        #expect(parameters["request_kind"] == "authenticated")
        #expect(parameters["level"] == "user")
        #expect(parameters["oauth_error"] == "invalid_grant")
        #expect(parameters["code"] == "400")
        #expect(parameters["endpoint"] == "POST /oauth/token")
    }

    @Test func theKindOfRequestKeepsALevelTheErrorAlreadyNames() {
        let exchanged = CourierError(kind: .tokenRefreshFailed, message: "", level: AuthorizationLevel(rawValue: "x:1"))
        let tagged = exchanged.with(requestKind: .authenticated)
        #expect(tagged.level == AuthorizationLevel(rawValue: "x:1"))
        #expect(tagged.description == "CourierError.tokenRefreshFailed (authenticated request, level x:1)")
        // A later tag replaces the kind; the level stays.
        let retagged = tagged.with(requestKind: .implicit)
        #expect(retagged.requestKind == .implicit)
        #expect(retagged.level == AuthorizationLevel(rawValue: "x:1"))
    }

    @Test func theKindOfRequestGivesItsLevelToAnErrorThatNamesNone() {
        #expect(CourierError(.timedOut).with(requestKind: .anonymous).level == .device)
        let unauthenticated = CourierError(.timedOut).with(requestKind: .unauthenticated)
        #expect(unauthenticated.level == nil)
        #expect(unauthenticated.parameters["level"] == nil)
        #expect(unauthenticated.description == "CourierError.timedOut (unauthenticated request)")
        let plain = CourierError(kind: .timedOut, message: "no answer", endpoint: "GET /items")
        #expect(plain.requestKind == nil && plain.level == nil && plain.oauthError == nil)
        #expect(plain.description == "CourierError.timedOut (GET /items): no answer")
    }

    @Test func anErrorWithoutALevelKeepsTheServersErrorAlone() {
        let error = CourierError(
            kind: .clientAuthenticationFailed,
            message: "",
            oauthError: OAuth2Error(code: .invalidClient)
        )
        #expect(error.level == nil)
        #expect(error.oauthError == OAuth2Error(code: .invalidClient))
        #expect(error.description == "CourierError.clientAuthenticationFailed [invalid_client]")
        var cleared = error
        cleared.oauthError = nil
        #expect(cleared.oauthError == nil)
        #expect(cleared.parameters["oauth_error"] == nil)
        #expect(error.oauthError != nil)
    }
}
