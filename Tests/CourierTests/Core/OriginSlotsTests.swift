import Testing

@testable import Courier

/// The receive buffer follows what an origin has sent lately, and the transfers that may hold
/// an easy handle follow the protocol it speaks (CurlOriginSlots).
struct OriginSlotsTests {
    @Test func largeBodiesEarnALargerReceiveBufferAndSmallOnesTakeItBack() {
        let slots = CurlOriginSlots(secure: false)
        #expect(slots.receiveBufferSize == 16 << 10)  // nothing known yet: curl's default
        slots.record(bodyBytes: 1 << 20)
        #expect(slots.receiveBufferSize == 128 << 10)
        for _ in 0..<4 { slots.record(bodyBytes: 1 << 20) }
        #expect(slots.receiveBufferSize == 128 << 10)
        for _ in 0..<8 { slots.record(bodyBytes: 1024) }
        #expect(slots.receiveBufferSize == 16 << 10)
    }

    @Test func oneHugeBodyDoesNotPinTheLargeBufferForever() {
        let slots = CurlOriginSlots(secure: false)
        slots.record(bodyBytes: 8 << 30)  // counted as at most 64 MiB
        for _ in 0..<16 { slots.record(bodyBytes: 512) }
        #expect(slots.receiveBufferSize == 16 << 10)
    }

    @Test func aPlainOriginCountsAsHTTP1AndATLSOneAsMultiplexedUntilAResponseTells() {
        let plain = CurlOriginSlots(secure: false)
        #expect(plain.transferLimit(connections: 8) == 16)
        plain.learnMultiplexing(version: 0)  // no head: nothing learnt
        #expect(plain.transferLimit(connections: 8) == 16)
        plain.learnMultiplexing(version: 3)  // CURL_HTTP_VERSION_2_0
        #expect(plain.transferLimit(connections: 8) == 512)

        let secure = CurlOriginSlots(secure: true)
        #expect(secure.transferLimit(connections: 8) == 512)
        secure.learnMultiplexing(version: 2)  // CURL_HTTP_VERSION_1_1
        #expect(secure.transferLimit(connections: 8) == 16)
        #expect(secure.transferLimit(connections: 0) == .max)
    }
}
