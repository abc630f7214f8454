extension SQLiteTokenStore {
    /// How a ``SQLiteTokenStore`` waits for the other processes that share its file.
    public struct Configuration: Sendable {
        /// How long a call waits for another connection's lock — another process writing,
        /// or checkpointing its log — before it fails with
        /// ``/Courier/CourierError/Kind/tokenStoreIOFailure``; 5 seconds by default. Writes
        /// take the lock for a few milliseconds each, so a call waits this long only behind a
        /// process that is stuck holding it. A broker whose call fails this way renews on its
        /// own and logs a warning.
        public var busyTimeout: Duration

        /// How long a removed entry's tombstone is kept before it is pruned (see
        /// ``SQLiteTokenStore``): one hour.
        var tombstoneRetention: Duration = .seconds(3600)

        /// Creates a configuration.
        ///
        /// - Parameter busyTimeout: How long a call waits for another connection's lock;
        ///   5 seconds by default.
        public init(busyTimeout: Duration = .seconds(5)) {
            self.busyTimeout = busyTimeout
        }
    }
}
