import Testing
import Wire

@Suite struct UnwrappingTests {
    @Test func sequenceNumbersWrapForwards() {
        var u = SequenceNumberUnwrapper()
        let a = u.unwrap(65534)
        #expect(u.unwrap(65535) == a + 1)
        #expect(u.unwrap(0) == a + 2)
        #expect(u.unwrap(1) == a + 3)
    }

    @Test func reorderingAcrossTheWrapGoesBackwards() {
        var u = SequenceNumberUnwrapper()
        let a = u.unwrap(2)
        #expect(u.unwrap(65535) == a - 3)
        #expect(u.unwrap(3) == a + 1)
    }

    @Test func reorderingBeforeTheFirstPacketStaysPositive() {
        var u = SequenceNumberUnwrapper()
        let first = u.unwrap(0)
        #expect(u.unwrap(65000) < first)
        #expect(u.unwrap(65000) > 0)
    }

    @Test func manyCyclesAccumulate() {
        var u = SequenceNumberUnwrapper()
        let start = u.unwrap(0)
        var last = start
        for i in 1...300_000 { last = u.unwrap(UInt16(truncatingIfNeeded: i)) }
        #expect(last == start + 300_000)
    }

    @Test func timestampsWrap() {
        var u = TimestampUnwrapper()
        let a = u.unwrap(0xFFFF_FF00)
        #expect(u.unwrap(0x0000_0100) == a + 0x200)
        #expect(u.unwrap(0xFFFF_FFF0) == a + 0xF0)
    }

    @Test func serialArithmetic() {
        #expect(UInt16(1).isNewer(than: 0))
        #expect(UInt16(0).isNewer(than: 65535))
        #expect(!UInt16(65535).isNewer(than: 0))
        #expect(!UInt16(5).isNewer(than: 5))
        #expect(UInt32(0).isNewer(than: 0xFFFF_FFFF))
    }
}

@Suite struct IdentifierTests {
    @Test func shortTokensRoundTripAndCompare() {
        let bytes = Array("q".utf8)
        let t = ShortToken(bytes: bytes.span.bytes)
        #expect(t == ShortToken("q"))
        #expect(ShortToken("0123456789abcdef")?.description == "0123456789abcdef")
        #expect(ShortToken("0123456789abcdefg") == nil)
        #expect(ShortToken("") == nil)
        #expect(MID("0") != MID("00"))
        #expect(RID("h") == "h")
    }

    @Test func payloadTypeIsSevenBits() {
        #expect(PayloadType(rawValue: 128) == nil)
        #expect(PayloadType(masking: 0xE0).rawValue == 0x60)
    }

    @Test func instantArithmetic() {
        let t = Instant.zero + .milliseconds(1500)
        #expect(t.nanoseconds == 1_500_000_000)
        #expect(t - Instant.zero == .milliseconds(1500))
        #expect(Duration.seconds(Int64.max).nanoseconds == .max)
    }
}
