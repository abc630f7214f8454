import Testing

@testable import Courier

/// The receive buffer follows what an origin has sent lately, and the transfers that may hold
/// an easy handle follow the protocol it speaks (CurlOriginSlots).
struct OriginSlotsTests {
    @Test func largeBodiesEarnALargerReceiveBufferAndSmallOnesTakeItBack() {
        let slots = CurlOriginSlots(secure: false, connections: 8)
        #expect(slots.receiveBufferSize == 16 << 10)  // nothing known yet: curl's default
        slots.record(bodyBytes: 1 << 20)
        #expect(slots.receiveBufferSize == 128 << 10)
        for _ in 0..<4 { slots.record(bodyBytes: 1 << 20) }
        #expect(slots.receiveBufferSize == 128 << 10)
        for _ in 0..<8 { slots.record(bodyBytes: 1024) }
        #expect(slots.receiveBufferSize == 16 << 10)
    }

    @Test func oneHugeBodyDoesNotPinTheLargeBufferForever() {
        let slots = CurlOriginSlots(secure: false, connections: 8)
        slots.record(bodyBytes: 8 << 30)  // counted as at most 64 MiB
        for _ in 0..<16 { slots.record(bodyBytes: 512) }
        #expect(slots.receiveBufferSize == 16 << 10)
    }

    @Test func aPlainOriginCountsAsHTTP1AndATLSOneAsMultiplexedUntilAResponseTells() {
        let plain = CurlOriginSlots(secure: false, connections: 8)
        #expect(plain.transferLimit == 16)
        plain.learnMultiplexing(.unknown)  // no head: nothing learnt
        #expect(plain.transferLimit == 16)
        plain.learnMultiplexing(.http2)
        #expect(plain.transferLimit == 512)

        let secure = CurlOriginSlots(secure: true, connections: 8)
        #expect(secure.transferLimit == 512)
        secure.learnMultiplexing(.http1_1)
        #expect(secure.transferLimit == 16)
        #expect(CurlOriginSlots(secure: true, connections: 0).transferLimit == .max)
    }
}
