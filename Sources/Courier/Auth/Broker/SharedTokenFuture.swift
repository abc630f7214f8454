/// The one result of a broker operation, awaited by any number of callers.
typealias SharedTokenFuture = SharedOutcome<BrokeredToken>
