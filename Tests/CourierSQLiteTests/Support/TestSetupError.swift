/// A failure of the tests' own doings — their SQLite calls, processes, servers — rather than of
/// the code under test.
struct TestSetupError: Error, CustomStringConvertible {
    /// What failed.
    let message: String
    /// The message.
    var description: String { message }
}
