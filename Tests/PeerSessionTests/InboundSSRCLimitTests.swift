import PeerSession
import RTCP
import SFUTesting
import SRTP
import Testing
import Wire

/// A peer with valid keys that sends SRTP and SRTCP from a new SSRC on
/// every packet: libsrtp (`ssrc_any_inbound`) would keep a stream for each
/// until the transport closes and search them all per packet. The
/// transport admits at most `maxInboundSSRCs` and drops the rest before
/// libsrtp sees them.
@Suite struct InboundSSRCLimitTests {
    private func rtp(_ seq: UInt16, ssrc: UInt32) -> [UInt8] {
        RTPBuilders.packet(sequenceNumber: seq, ssrc: ssrc, payload: RTPBuilders.opusPayload(frameBytes: 60))
    }

    /// Protects `packet` on the client and hands it to the server as the
    /// socket would; true when it came out decrypted.
    private func deliver(_ packet: [UInt8], rtcp: Bool = false, over link: TransportLink) -> Bool {
        var buffer = packet + [UInt8](repeating: 0, count: SRTPSession.rtcpTrailerRoom)
        return buffer.withUnsafeMutableBytes { raw in
            let protected =
                rtcp ? link.client.protectRTCP(raw, length: packet.count) : link.client.protectRTP(raw, length: packet.count)
            guard let protected else { return false }
            let datagram = UnsafeMutableRawBufferPointer(rebasing: raw[0..<protected.length])
            return link.server.receive(datagram, from: link.clientAddress, now: link.clock.now) != .handled
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func aNewSSRCPerPacketStopsAtTheCapAndLegitimateMediaFlows(profile: SRTPProfile) throws {
        let link = try TransportLink(serverProfiles: [profile], clientProfiles: [profile])
        #expect(link.connect())
        let cap = PeerTransport.defaultMaxInboundSSRCs
        let legit: UInt32 = 0xAABB_CCDD
        #expect(deliver(rtp(1, ssrc: legit), over: link))
        var accepted = 0
        for n in 0..<3000 {
            let ssrc = 0x1000_0000 + UInt32(n)
            if deliver(rtp(UInt16(n & 0xFFFF), ssrc: ssrc), over: link) { accepted += 1 }
            // SRTCP keys libsrtp's streams by the sender SSRC too.
            if deliver(RTCPBuilders.receiverReportWithCNAME(sender: SSRC(ssrc + 0x100_0000), cname: "x"), rtcp: true, over: link)
            {
                accepted += 1
            }
        }
        #expect(link.server.inboundSSRCCount == cap)
        #expect(accepted == cap - 1)
        #expect(link.server.counters.ssrcLimitExceeded == 6000 - (cap - 1))
        #expect(link.server.counters.srtpRejected == 0)
        // The SSRC admitted first keeps flowing, RTP and RTCP.
        for seq in UInt16(2)...20 { #expect(deliver(rtp(seq, ssrc: legit), over: link)) }
        #expect(deliver(RTCPBuilders.receiverReportWithCNAME(sender: SSRC(legit), cname: "x"), rtcp: true, over: link))
        #expect(link.server.state == .connected)
    }

    /// Garbage from a new SSRC (no valid tag) takes no place: only an
    /// authenticated packet is admitted.
    @Test func unauthenticatedPacketsTakeNoPlace() throws {
        let link = try TransportLink()
        #expect(link.connect())
        for n in 0..<200 {
            var forged = rtp(UInt16(n), ssrc: 0x2000_0000 + UInt32(n)) + [UInt8](repeating: 0x5A, count: 16)
            let r = forged.withUnsafeMutableBytes { link.server.receive($0, from: link.clientAddress, now: link.clock.now) }
            #expect(r == .handled)
        }
        #expect(link.server.inboundSSRCCount == 0)
        #expect(link.server.counters.srtpRejected == 200)
        #expect(deliver(rtp(1, ssrc: 0x0102_0304), over: link))
        #expect(link.server.inboundSSRCCount == 1)
    }

    /// The figure in docs/TRANSPORT.md: server cost per packet of the last
    /// 1000 of 10,000 new-SSRC packets, with the cap and without it (what
    /// `ssrc_any_inbound` alone gave). Printed, not asserted: timing is a
    /// benchmark on shared CPUs; the assertion is on the stream count.
    @Test(arguments: [PeerTransport.defaultMaxInboundSSRCs, Int.max])
    func costPerPacketOfANewSSRCFlood(cap: Int) throws {
        let link = try TransportLink(
            serverProfiles: [.aeadAES128GCM], clientProfiles: [.aeadAES128GCM], serverMaxInboundSSRCs: cap)
        #expect(link.connect())
        let total = 10_000
        var packets: [[UInt8]] = []
        packets.reserveCapacity(total)
        for n in 0..<total {
            var buffer = rtp(UInt16(n & 0xFFFF), ssrc: 0x3000_0000 + UInt32(n)) + [UInt8](repeating: 0, count: 200)
            let length = buffer.count - 200
            let out = buffer.withUnsafeMutableBytes { link.client.protectRTP($0, length: length) }
            packets.append(Array(buffer[0..<(out?.length ?? 0)]))
        }
        let clock = ContinuousClock()
        var firstCost = Duration.zero
        var lastCost = Duration.zero
        for (n, p) in packets.enumerated() {
            var copy = p
            let start = clock.now
            _ = copy.withUnsafeMutableBytes { link.server.receive($0, from: link.clientAddress, now: link.clock.now) }
            let spent = clock.now - start
            if n < 1000 { firstCost += spent } else if n >= total - 1000 { lastCost += spent }
        }
        print(
            "new-SSRC flood, cap \(cap == Int.max ? "none" : String(cap)): first 1000 \(firstCost / 1000)/packet, last 1000 \(lastCost / 1000)/packet, streams \(link.server.inboundSSRCCount)"
        )
        #expect(link.server.inboundSSRCCount == min(cap, total))
    }
}
