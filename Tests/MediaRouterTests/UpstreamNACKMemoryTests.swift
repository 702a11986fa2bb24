import Testing
import Wire

@testable import MediaRouter

@Suite struct UpstreamNACKMemoryTests {
    @Test func aLossIsAskedForOncePerWindowAndLayer() {
        var memory = UpstreamNACKMemory()
        let t0 = Instant(nanoseconds: 1_000_000_000)
        let ask1 = memory.shouldAsk(layer: 0, sequenceNumber: 100, now: t0)
        #expect(ask1)
        let ask2 = memory.shouldAsk(layer: 0, sequenceNumber: 100, now: t0 + .milliseconds(99))
        #expect(!ask2)
        // Another layer's packet of the same number is another loss.
        let ask3 = memory.shouldAsk(layer: 1, sequenceNumber: 100, now: t0 + .milliseconds(10))
        #expect(ask3)
        // Past the window: asked again (the resend may have been lost).
        let ask4 = memory.shouldAsk(layer: 0, sequenceNumber: 100, now: t0 + UpstreamNACKMemory.window)
        #expect(ask4)
    }

    @Test func numbersSharingASlotEvictEachOtherAndAreNeverLeftUnasked() {
        var memory = UpstreamNACKMemory()
        let t0 = Instant(nanoseconds: 1_000_000_000)
        let other = UInt16(100 + UpstreamNACKMemory.slotCount)
        let ask5 = memory.shouldAsk(layer: 0, sequenceNumber: 100, now: t0)
        #expect(ask5)
        let ask6 = memory.shouldAsk(layer: 0, sequenceNumber: other, now: t0)
        #expect(ask6)
        // 100's memory is gone: asked again, a duplicate at worst.
        let ask7 = memory.shouldAsk(layer: 0, sequenceNumber: 100, now: t0)
        #expect(ask7)
        // Wrapping numbers stay in range.
        let ask8 = memory.shouldAsk(layer: 2, sequenceNumber: 65535, now: t0)
        #expect(ask8)
        let ask9 = memory.shouldAsk(layer: 2, sequenceNumber: 65535, now: t0)
        #expect(!ask9)
    }
}
