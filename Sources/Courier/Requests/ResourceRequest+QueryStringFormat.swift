extension ResourceRequest {
    /// How nested parameters, arrays, spaces and plus signs are written in a query string or a
    /// form body.
    ///
    /// | option | choices (default first) | `["a": ["b": 1], "l": [1, 2], "s": "x y+z"]` |
    /// |---|---|---|
    /// | ``dictionaryFormat`` | ``DictionaryFormat/subscripted``, ``DictionaryFormat/dotNotation`` | `a%5Bb%5D=1`, `a.b=1` |
    /// | ``arrayFormat`` | ``ArrayFormat/indexed``, ``ArrayFormat/bracketed``, ``ArrayFormat/commaSeparated``, ``ArrayFormat/repeatedKeys`` | `l%5B0%5D=1&l%5B1%5D=2`, `l%5B%5D=1&l%5B%5D=2`, `l=1,2`, `l=1&l=2` |
    /// | ``spaceEncoding`` | ``SpaceEncoding/percentEncoded``, ``SpaceEncoding/plus`` | `s=x%20y%2Bz`, `s=x+y%2Bz` |
    /// | ``plusEncoding`` | ``PlusEncoding/percentEncoded``, ``PlusEncoding/literal`` | `s=x%20y%2Bz`, `s=x%20y+z` |
    ///
    /// Every name and value is percent-encoded as RFC 3986 asks: all bytes of the UTF-8 form
    /// except the unreserved `A–Z a–z 0–9 - . _ ~` become `%XX` (upper-case hex), and that
    /// includes the brackets of subscripts, which RFC 3986 does not allow in a query. Servers
    /// decode them before they parse nesting. Dictionary members are written in the order of
    /// the UTF-8 bytes of their names, so the same parameters always give the same string.
    ///
    /// Empty arrays and empty dictionaries write nothing; ``ParameterValue/null`` writes the
    /// name without `=`; Booleans are `true` and `false`; a `Double` is written as Swift's
    /// shortest round-tripping form (`1.0`, `0.1`, `1e-07`).
    ///
    /// Only ``ArrayFormat/indexed`` keeps every structure: the other array formats cannot tell
    /// a one-element array from a scalar, and ``ArrayFormat/commaSeparated`` and
    /// ``ArrayFormat/repeatedKeys`` refuse arrays whose elements are arrays or dictionaries
    /// (``CourierError/Kind/invalidParameter``).
    public struct QueryStringFormat: Sendable, Hashable {
        /// How a member of a nested dictionary is named.
        public enum DictionaryFormat: String, Sendable, Hashable, CaseIterable {
            /// `parent[child]=value`, the form Rails, PHP and Conduit read.
            case subscripted
            /// `parent.child=value`.
            case dotNotation
        }

        /// How the elements of an array are named.
        public enum ArrayFormat: String, Sendable, Hashable, CaseIterable {
            /// `list[0]=a&list[1]=b`: lossless, the default.
            case indexed
            /// `list[]=a&list[]=b`.
            case bracketed
            /// `list=a,b`: commas inside elements are percent-encoded; scalar elements only.
            case commaSeparated
            /// `list=a&list=b`: scalar elements only.
            case repeatedKeys
        }

        /// How a space is written.
        public enum SpaceEncoding: String, Sendable, Hashable, CaseIterable {
            /// `%20`, as RFC 3986 asks: every server reads it as a space.
            case percentEncoded
            /// `+`, as HTML forms do: only servers that decode forms read it as a space.
            case plus
        }

        /// How a plus sign is written.
        public enum PlusEncoding: String, Sendable, Hashable, CaseIterable {
            /// `%2B`: every server reads it as a plus sign.
            case percentEncoded
            /// `+`, unchanged: a server that decodes forms reads it as a space.
            case literal
        }

        /// How nested dictionary members are named.
        public var dictionaryFormat: DictionaryFormat
        /// How array elements are named.
        public var arrayFormat: ArrayFormat
        /// How spaces are written.
        public var spaceEncoding: SpaceEncoding
        /// How plus signs are written.
        public var plusEncoding: PlusEncoding

        /// Creates a format.
        ///
        /// - Parameters:
        ///   - dictionaryFormat: How nested members are named (subscripts by default).
        ///   - arrayFormat: How array elements are named (indexed by default).
        ///   - spaceEncoding: How spaces are written (`%20` by default).
        ///   - plusEncoding: How plus signs are written (`%2B` by default).
        public init(
            dictionaryFormat: DictionaryFormat = .subscripted,
            arrayFormat: ArrayFormat = .indexed,
            spaceEncoding: SpaceEncoding = .percentEncoded,
            plusEncoding: PlusEncoding = .percentEncoded
        ) {
            self.dictionaryFormat = dictionaryFormat
            self.arrayFormat = arrayFormat
            self.spaceEncoding = spaceEncoding
            self.plusEncoding = plusEncoding
        }

        /// Formats parameters as a query string, without the leading `?`.
        ///
        /// ```swift
        /// let query = try ResourceRequest.QueryStringFormat(arrayFormat: .commaSeparated).encode(["tags": ["a", "b"], "q": "x y"])
        /// // "q=x%20y&tags=a,b"
        /// ```
        ///
        /// - Parameter parameters: The parameters.
        /// - Returns: The `&`-separated, percent-encoded pairs.
        /// - Throws: ``CourierError/Kind/invalidParameter`` for NaN, an infinity, an empty name, or a
        ///   nested array element the array format cannot write.
        public func encode(_ parameters: [String: ParameterValue]) throws -> String {
            try QueryStringEncoder(format: self).encode(parameters)
        }
    }
}
