import HTTPTypes
import Testing

@testable import Courier

/// `Cache-Control` parsing (RFC 9111 §5.2): names without case, quoted arguments, unknown and
/// invalid directives, duplicates.
struct CacheControlTests {
    @Test func readsResponseDirectives() {
        let control = CacheControl(
            parsing: "Public, MAX-AGE=60, s-maxage=120, must-revalidate, stale-while-revalidate=30"
        )
        #expect(control.isPublic)
        #expect(control.maxAge == 60)
        #expect(control.sharedMaxAge == 120)
        #expect(control.mustRevalidate)
        #expect(control.staleWhileRevalidate == 30)
        #expect(!control.noStore && !control.noCache && !control.isPrivate)
    }

    @Test func readsRequestDirectives() {
        let control = CacheControl(parsing: "max-stale, min-fresh=5, only-if-cached, stale-if-error=9")
        #expect(control.maxStale == Int.max)
        #expect(control.minFresh == 5)
        #expect(control.onlyIfCached)
        #expect(control.staleIfError == 9)
        #expect(CacheControl(parsing: "max-stale=7").maxStale == 7)
    }

    @Test func quotedArgumentsAndListsOfFieldNames() {
        let control = CacheControl(parsing: #"private="Set-Cookie, X-Mine", max-age="30", no-cache="a,b""#)
        #expect(control.isPrivate)
        #expect(control.noCache)
        #expect(control.maxAge == 30)
        #expect(CacheControl.directives(in: #"x="a\"b,c", y"#).map(\.name) == ["x", "y"])
        #expect(CacheControl.directives(in: #"x="a\"b,c", y"#).first?.argument == #"a"b,c"#)
    }

    @Test func everyFieldLineCounts() {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .cacheControl, value: "no-cache"))
        fields.append(HTTPField(name: .cacheControl, value: "max-age=5"))
        let control = CacheControl(fields)
        #expect(control.noCache)
        #expect(control.maxAge == 5)
    }

    @Test func unknownAndEmptyItemsAreIgnored() {
        let control = CacheControl(parsing: " , ,community=\"UCI\", immutable,, max-age=3 ,")
        #expect(
            control
                == {
                    var expected = CacheControl()
                    expected.maxAge = 3
                    return expected
                }()
        )
    }

    @Test func invalidSecondsAreReadTheSafeWay() {
        #expect(CacheControl(parsing: "max-age=abc").maxAge == 0)
        #expect(CacheControl(parsing: "max-age").maxAge == 0)
        #expect(CacheControl(parsing: "max-age=-1").maxAge == 0)
        #expect(CacheControl(parsing: "max-age=1.5").maxAge == 0)
        #expect(CacheControl(parsing: "min-fresh=x").minFresh == nil)
        #expect(CacheControl(parsing: "max-stale=x").maxStale == nil)
        #expect(CacheControl(parsing: "stale-if-error=").staleIfError == nil)
        #expect(CacheControl(parsing: "max-age=99999999999999999999").maxAge == CacheControl.maximumSeconds)
    }

    @Test func duplicates() {
        #expect(CacheControl(parsing: "max-age=60, max-age=60").maxAge == 60)
        #expect(CacheControl(parsing: "max-age=60, max-age=10").maxAge == 0, "conflicting freshness is stale")
        #expect(CacheControl(parsing: "min-fresh=1, min-fresh=9").minFresh == 1, "the first wins")
    }
}
