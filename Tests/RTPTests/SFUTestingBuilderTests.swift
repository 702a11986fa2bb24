import SFUTesting
import Testing
import Wire

@testable import RTP

@Suite struct SFUTestingBuilderTests {
    @Test func packetBuilderProducesParseablePacket() throws {
        let p = RTPBuilders.packet(sequenceNumber: 7, marker: true, csrcs: [9], extensions: [(3, [0, 1])], payload: [1, 2])
        let h = try parse(p)
        #expect(h.sequenceNumber == 7 && h.marker && h.ssrc == SSRC(0x1234_5678) && h.csrc(at: 0, in: p) == SSRC(9))
        #expect(h.extensionValueBytes(id: 3, in: p) == [0, 1])
        #expect(Array(p[h.payloadRange]) == [1, 2])
    }
}
