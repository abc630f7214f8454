extension CourierError {
    /// An error of a token store about its file, for the stores of Courier's other products
    /// (``filePath`` is set only inside Courier).
    ///
    /// - Parameters:
    ///   - kind: One of the token-store kinds.
    ///   - message: What went wrong; never a token or a key.
    ///   - path: The store's file.
    ///   - file: Where the error was made.
    ///   - line: Where the error was made.
    /// - Returns: The error.
    package static func tokenStore(
        _ kind: Kind,
        message: String,
        path: String?,
        file: String = #fileID,
        line: Int = #line
    ) -> CourierError {
        CourierError(kind: kind, message: message, path: path, file: file, line: line)
    }
}
