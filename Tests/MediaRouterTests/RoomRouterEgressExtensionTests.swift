import MediaRouter
import Negotiation
import RTP
import RoomProtocol
import Rooms
import SDP
import SFUTesting
import Testing
import Wire

/// Each subscriber transport gets our header extensions under the ids it
/// negotiated (issue #14): a room subscriber answered our offer's ids; a
/// WHEP viewer chose its own in its offer, and a transport-wide sequence
/// number under any other id is one it ignores, so it would send no
/// transport-cc feedback and its estimate would never rise.
@Suite struct RoomRouterEgressExtensionTests {
    static let viewerIDs = HeaderExtensionIDs(maps: [
        ExtensionMap(id: 9, uri: HeaderExtensionURI.transportWideSequenceNumber),
        ExtensionMap(id: 12, uri: HeaderExtensionURI.absoluteSendTime),
    ])

    /// The 16-bit value of extension `id` in each of `peer`'s packets.
    static func values(_ id: UInt8, of peer: TestPeer) -> [UInt16?] {
        zip(peer.rtp, peer.rtpHeaders).map { packet, header in
            guard let r = header.extensionValueRange(id: id, in: packet.span.bytes), r.count == 2 else { return nil }
            return UInt16(packet[r.lowerBound]) << 8 | UInt16(packet[r.lowerBound + 1])
        }
    }

    @Test func aWHEPViewerGetsTransportWideNumbersUnderItsOwnIds() throws {
        let bed = try RouterTestbed(workers: 1)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r1", worker: 0)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_a",
                description: TestTrack.opusDescription(ssrc: 0xA0A0)), on: 0)
        let viewer = try bed.addPeer(
            "PA_view", role: .subscriber, room: "r1", worker: 0, egressHeaderExtensions: Self.viewerIDs)
        let member = try bed.addPeer("PA_sub", role: .subscriber, room: "r1", worker: 0)
        for (i, who) in ["PA_view", "PA_sub"].enumerated() {
            bed.execute(
                .forward(
                    room: "r1", trackID: "TR_a", subscriber: ParticipantID(who),
                    outgoing: TestTrack.outgoing(
                        .opus(payloadType: TestTrack.opus), kind: .audio, ssrc: 0x5500 + UInt32(i), trackID: "TR_a")),
                on: 0)
        }
        #expect(bed.connect())
        RoomRouterForwardingTests.sendOpus(0..<20, from: publisher, on: bed)
        try #require(viewer.rtp.count == 20 && member.rtp.count == 20)

        // The viewer: its ids, one transport-wide number per packet, in
        // order; nothing under our offer's ids.
        let viewerNumbers = Self.values(9, of: viewer).compactMap { $0 }
        #expect(viewerNumbers.count == 20)
        #expect(zip(viewerNumbers, viewerNumbers.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
        // abs-send-time: 24 bits (6.18 fixed point) under the viewer's id.
        #expect(
            zip(viewer.rtp, viewer.rtpHeaders).allSatisfy { $1.extensionValueRange(id: 12, in: $0.span.bytes)?.count == 3 })
        let ours = HeaderExtensionIDs(maps: SubscriberOfferBuilder.defaultHeaderExtensions)
        let ourID = try #require(ours.transportWideSequenceNumber)
        #expect(Self.values(ourID, of: viewer).allSatisfy { $0 == nil })
        // A room subscriber keeps our offer's ids.
        #expect(Self.values(ourID, of: member).compactMap { $0 }.count == 20)
        #expect(Self.values(9, of: member).allSatisfy { $0 == nil })
    }
}
