/// The one validation of a stored response, awaited by every caller that needs it at once.
typealias SharedRevalidation = SharedOutcome<Response>
