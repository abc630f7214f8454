import Foundation

/// Checks files before a request that uploads them is sent.
enum FileSize {
    /// The size of the regular file at `path`.
    ///
    /// - Throws: ``CourierError/Kind/unreadableFile`` when there is no such file, it is not a
    ///   regular file, or it cannot be read.
    static func ofRegularFile(atPath path: String) throws -> Int64 {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw CourierError(kind: .unreadableFile, message: "there is no readable file at \(ErrorText.file(path))")
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular, let size = attributes[.size] as? NSNumber else {
            throw CourierError(kind: .unreadableFile, message: "\(ErrorText.file(path)) is not a regular file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw CourierError(kind: .unreadableFile, message: "\(ErrorText.file(path)) is not readable")
        }
        return size.int64Value
    }
}
