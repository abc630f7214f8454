import Foundation

extension Response {
    /// The body as text, decoded with the charset that `Content-Type` names.
    ///
    /// Without a charset the body is read as UTF-8 (RFC 8259 for JSON, and what servers send
    /// today; HTTP/1.1 dropped the old ISO-8859-1 default). Known charsets: UTF-8, US-ASCII,
    /// ISO-8859-1 (Latin-1), ISO-8859-2, Windows-1250 to 1254, UTF-16 (with or without
    /// BOM, BE, LE), UTF-32 (BE, LE), Shift_JIS, EUC-JP and ISO-2022-JP. An unknown charset is
    /// read as UTF-8. A leading UTF-8 byte order mark is dropped.
    ///
    /// `nil` when the bytes are not valid in that charset.
    public var text: String? {
        let encoding = contentType?.charset.flatMap(Self.encoding(forCharset:)) ?? .utf8
        if encoding == .utf8 {
            var bytes = data[...]
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
            return String(validating: bytes, as: UTF8.self)
        }
        return String(data: data, encoding: encoding)
    }

    /// The Foundation encoding for an IANA charset name, or `nil` when it is not known.
    ///
    /// - Parameter charset: The name, in any case.
    /// - Returns: The encoding.
    static func encoding(forCharset charset: String) -> String.Encoding? {
        switch charset.lowercased() {
        case "utf-8", "utf8": .utf8
        case "us-ascii", "ascii": .ascii
        case "iso-8859-1", "iso8859-1", "latin1", "l1", "iso_8859-1": .isoLatin1
        case "iso-8859-2", "iso8859-2", "latin2", "l2": .isoLatin2
        case "windows-1250", "cp1250": .windowsCP1250
        case "windows-1251", "cp1251": .windowsCP1251
        case "windows-1252", "cp1252": .windowsCP1252
        case "windows-1253", "cp1253": .windowsCP1253
        case "windows-1254", "cp1254": .windowsCP1254
        case "utf-16": .utf16
        case "utf-16be": .utf16BigEndian
        case "utf-16le": .utf16LittleEndian
        case "utf-32": .utf32
        case "utf-32be": .utf32BigEndian
        case "utf-32le": .utf32LittleEndian
        case "shift_jis", "shift-jis", "sjis": .shiftJIS
        case "euc-jp": .japaneseEUC
        case "iso-2022-jp": .iso2022JP
        default: nil
        }
    }
}
