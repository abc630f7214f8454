import Testing

@testable import Courier

@Suite struct RequestsQueryEncodingTests {
    static let sample: [String: ParameterValue] = ["a": ["b": 1, "c": "x"], "l": [1, 2], "s": "x y+z"]

    /// One row of the option table: the format and what it writes for `sample`.
    struct Row: Sendable, CustomTestStringConvertible {
        let format: ResourceRequest.QueryStringFormat
        let expected: String
        var testDescription: String {
            "\(format.dictionaryFormat)/\(format.arrayFormat)/\(format.spaceEncoding)/\(format.plusEncoding)"
        }
    }

    static let table: [Row] = [
        Row(
            format: ResourceRequest.QueryStringFormat(),
            expected: "a%5Bb%5D=1&a%5Bc%5D=x&l%5B0%5D=1&l%5B1%5D=2&s=x%20y%2Bz"
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(dictionaryFormat: .dotNotation),
            expected: "a.b=1&a.c=x&l%5B0%5D=1&l%5B1%5D=2&s=x%20y%2Bz"
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(arrayFormat: .bracketed),
            expected: "a%5Bb%5D=1&a%5Bc%5D=x&l%5B%5D=1&l%5B%5D=2&s=x%20y%2Bz"
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(arrayFormat: .commaSeparated),
            expected: "a%5Bb%5D=1&a%5Bc%5D=x&l=1,2&s=x%20y%2Bz"
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(arrayFormat: .repeatedKeys),
            expected: "a%5Bb%5D=1&a%5Bc%5D=x&l=1&l=2&s=x%20y%2Bz"
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(spaceEncoding: .plus),
            expected: "a%5Bb%5D=1&a%5Bc%5D=x&l%5B0%5D=1&l%5B1%5D=2&s=x+y%2Bz"
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(plusEncoding: .literal),
            expected: "a%5Bb%5D=1&a%5Bc%5D=x&l%5B0%5D=1&l%5B1%5D=2&s=x%20y+z"
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(
                dictionaryFormat: .dotNotation,
                arrayFormat: .commaSeparated,
                spaceEncoding: .plus,
                plusEncoding: .literal
            ),
            expected: "a.b=1&a.c=x&l=1,2&s=x+y+z"
        ),
    ]

    @Test(arguments: table)
    func optionTable(_ row: Row) throws {
        #expect(try row.format.encode(Self.sample) == row.expected)
    }

    /// Single values: scalars, RFC 3986 escaping and the empty cases.
    @Test(
        arguments: [
            (["n": nil] as [String: ParameterValue], "n"),
            (["t": true, "f": false], "f=false&t=true"),
            (["d": 1.5, "e": 1.0, "g": 1e-7], "d=1.5&e=1.0&g=1e-07"),
            (["i": -42], "i=-42"),
            (["u": "é"], "u=%C3%A9"),
            (["r": "&=?/#%[]"], "r=%26%3D%3F%2F%23%25%5B%5D"),
            (["k": "A-z_0.9~"], "k=A-z_0.9~"),
            (["emoji": "🙂"], "emoji=%F0%9F%99%82"),
            (["a b": "c"], "a%20b=c"),
            (["empty": [], "none": [:], "s": ""], "s="),
            (["m": [[1, 2], [3]]], "m%5B0%5D%5B0%5D=1&m%5B0%5D%5B1%5D=2&m%5B1%5D%5B0%5D=3"),
            (["c": ["x,y", "z"]], "c%5B0%5D=x%2Cy&c%5B1%5D=z"),
        ] as [([String: ParameterValue], String)]
    )
    func scalarsAndEscaping(_ parameters: [String: ParameterValue], expected: String) throws {
        #expect(try ResourceRequest.QueryStringFormat().encode(parameters) == expected)
    }

    @Test func membersAreSortedByUTF8Bytes() throws {
        let parameters: [String: ParameterValue] = ["b": 1, "B": 2, "a": 3, "é": 4, "_": 5, "aa": ["z": 1, "Z": 2]]
        #expect(
            try ResourceRequest.QueryStringFormat().encode(parameters)
                == "B=2&_=5&a=3&aa%5BZ%5D=2&aa%5Bz%5D=1&b=1&%C3%A9=4"
        )
    }

    @Test func theSameParametersAlwaysGiveTheSameString() throws {
        var parameters: [String: ParameterValue] = [:]
        for index in 0..<200 { parameters["key\(index)"] = .int(index) }
        let first = try ResourceRequest.QueryStringFormat().encode(parameters)
        for _ in 0..<5 {
            let copy = Dictionary(uniqueKeysWithValues: parameters.shuffled())
            #expect(try ResourceRequest.QueryStringFormat().encode(copy) == first)
        }
    }

    @Test func arraysOfDictionariesFollowBothFormats() throws {
        let parameters: [String: ParameterValue] = ["p": [["q": 1], ["q": 2]]]
        #expect(try ResourceRequest.QueryStringFormat().encode(parameters) == "p%5B0%5D%5Bq%5D=1&p%5B1%5D%5Bq%5D=2")
        #expect(
            try ResourceRequest.QueryStringFormat(dictionaryFormat: .dotNotation).encode(parameters)
                == "p%5B0%5D.q=1&p%5B1%5D.q=2"
        )
        #expect(
            try ResourceRequest.QueryStringFormat(arrayFormat: .bracketed).encode(parameters)
                == "p%5B%5D%5Bq%5D=1&p%5B%5D%5Bq%5D=2"
        )
    }

    @Test(arguments: [ResourceRequest.QueryStringFormat.ArrayFormat.commaSeparated, .repeatedKeys])
    func scalarOnlyFormatsRefuseNestedElements(_ arrayFormat: ResourceRequest.QueryStringFormat.ArrayFormat) {
        let format = ResourceRequest.QueryStringFormat(arrayFormat: arrayFormat)
        #expect(throws: CourierError(.invalidParameter)) { try format.encode(["l": [[1], [2]]]) }
        #expect(throws: CourierError(.invalidParameter)) { try format.encode(["l": [["a": 1]]]) }
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteNumbersAreTypedErrors(_ number: Double) {
        #expect(throws: CourierError(.invalidParameter)) {
            try ResourceRequest.QueryStringFormat().encode(["x": ["y": [.double(number)]]])
        }
        do {
            _ = try ResourceRequest.QueryStringFormat().encode(["x": ["y": [.double(number)]]])
        } catch let error as CourierError {
            #expect(error.message.contains("x.y[0]"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func emptyNamesAreRefused() {
        #expect(throws: CourierError(.invalidParameter)) {
            try ResourceRequest.QueryStringFormat().encode(["": 1])
        }
        #expect(throws: CourierError(.invalidParameter)) {
            try ResourceRequest.QueryStringFormat().encode(["a": ["": 1]])
        }
    }
}
