extension NetworkTask {
    /// How far one direction of a transfer has come.
    public struct Progress: Sendable, Hashable {
        /// The bytes transferred so far.
        public var completedBytes: Int64
        /// The bytes expected in all, when the peer announced them.
        public var expectedBytes: Int64?

        /// Creates a progress value.
        public init(completedBytes: Int64, expectedBytes: Int64?) {
            self.completedBytes = completedBytes
            self.expectedBytes = expectedBytes
        }

        /// The completed fraction between 0 and 1, when the total is known.
        public var fractionCompleted: Double? {
            guard let expectedBytes, expectedBytes > 0 else { return nil }
            return min(1, Double(completedBytes) / Double(expectedBytes))
        }
    }
}
