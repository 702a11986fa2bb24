import Codecs
import Testing
import Wire

/// `H264KeyframeTracker` with packets out of order (a late or
/// retransmitted packet of an older picture) and across timestamp
/// wraparound; the in-order cases are in VP8KeyframeHeaderTests.swift.
@Suite struct H264KeyframeTrackerOrderTests {
    // NAL unit headers (RFC 6184 section 5.3): F=0, NRI=3, Type.
    static let sps: [UInt8] = [0x67, 0x42, 0xE0, 0x1F]
    static let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
    static let idrSlice: [UInt8] = [0x65, 0x88, 0x84]
    static let nonIDRSlice: [UInt8] = [0x41, 0x9A, 0x02]

    /// STAP-A (type 24) of the units, each with its 16-bit size.
    static func stapA(_ units: [[UInt8]]) -> [UInt8] {
        [0x78] + units.flatMap { [UInt8($0.count >> 8), UInt8($0.count & 0xFF)] + $0 }
    }

    /// FU-A (type 28) fragment of an IDR slice.
    static func fuA(start: Bool, end: Bool) -> [UInt8] {
        [0x7C, (start ? 0x80 : 0) | (end ? 0x40 : 0) | 0x05, 0xAA, 0xBB]
    }

    static func refresh(_ tracker: inout H264KeyframeTracker, _ payload: [UInt8], ts: UInt32) throws -> Bool {
        tracker.isDecoderRefresh(try h264(payload), timestamp: ts)
    }

    @Test func aLatePacketOfAnOlderPictureIsNoSwitchPointAndChangesNothing() throws {
        var t = H264KeyframeTracker()
        let r1 = try Self.refresh(&t, Self.nonIDRSlice, ts: 3000)
        #expect(!r1)
        let r2 = try Self.refresh(&t, Self.stapA([Self.sps, Self.pps]), ts: 6000)
        #expect(r2)
        // A retransmitted keyframe start of the picture before: newer
        // packets went out already, so no switch there.
        let r3 = try Self.refresh(&t, Self.stapA([Self.sps, Self.pps, Self.idrSlice]), ts: 3000)
        #expect(!r3)
        // The newest access unit's state is kept through it: its SPS was
        // seen, so a repeated one is no new start.
        let r4 = try Self.refresh(&t, Self.stapA([Self.sps, Self.pps]), ts: 6000)
        #expect(!r4)
        let r5 = try Self.refresh(&t, Self.fuA(start: true, end: false), ts: 6000)
        #expect(!r5)
    }

    @Test func aSmallKeyframeInOneSTAPAIsASwitchPoint() throws {
        var t = H264KeyframeTracker()
        let r6 = try Self.refresh(&t, Self.stapA([Self.sps, Self.pps, Self.idrSlice]), ts: 1000)
        #expect(r6)
        #expect(try h264(Self.stapA([Self.sps, Self.pps, Self.idrSlice])).isDecoderRefreshPoint)
    }

    @Test func timestampWraparoundCountsAsNewer() throws {
        var t = H264KeyframeTracker()
        let r7 = try Self.refresh(&t, Self.stapA([Self.sps, Self.pps]), ts: 0xFFFF_FF00)
        #expect(r7)
        let r8 = try Self.refresh(&t, Self.nonIDRSlice, ts: 0xFFFF_FF00)
        #expect(!r8)
        let r9 = try Self.refresh(&t, Self.stapA([Self.sps, Self.pps]), ts: 0x0000_0E10)
        #expect(r9)
    }
}
