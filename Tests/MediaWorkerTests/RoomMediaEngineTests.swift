import Foundation
import MediaWorker
import Negotiation
import NetIO
import RTCP
import RTP
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire

/// The worker's media half over real UDP on 127.0.0.1: a `UDPWorker`
/// hosting a `RoomMediaEngine`, driven by `MediaCommand`s through its
/// mailbox as the rooms layer emits them, and client transports on their
/// own sockets. This is the shell's end-to-end forwarding test; the
/// router's policy (subscriptions, layers, keyframe requests, reports,
/// rooms apart) is tested on a virtual clock in MediaRouterTests
/// (`RoomRouterForwardingTests`).
@Suite(.serialized) struct RoomMediaEngineTests {
    private func header(_ bytes: [UInt8]) throws -> RTPHeader { try RTPHeader(parsing: bytes.span.bytes) }

    private func payload(_ bytes: [UInt8]) throws -> [UInt8] { Array(bytes[try header(bytes).payloadRange]) }

    private func opusPacket(_ n: Int, ssrc: UInt32, marker byte: UInt8 = 0x5A) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 111, sequenceNumber: UInt16(1000 + n), timestamp: UInt32(48_000 + 960 * n), ssrc: ssrc,
            payload: [0xF8, byte, UInt8(truncatingIfNeeded: n)])
    }

    /// Opens a publisher with an Opus track (SSRC 0xA0A0) and `subscribers`
    /// each forwarded the track with outgoing SSRC 0x5500 + index.
    private func opusRoom(_ bed: RoomWorkerHarness, subscribers: Int) throws -> (UDPClient, [UDPClient]) {
        let publisher = try UDPClient(certificate: bed.certificate)
        try bed.open(publisher, room: "r1", participant: "PA_pub", role: .publisher)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_a", description: Tracks.opusTrack(ssrc: 0xA0A0)))
        var subs: [UDPClient] = []
        for i in 0..<subscribers {
            let s = try UDPClient(certificate: bed.certificate)
            try bed.open(s, room: "r1", participant: "PA_sub\(i)", role: .subscriber)
            bed.execute(
                .forward(
                    room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub\(i)"),
                    outgoing: Tracks.outgoing(
                        .opus(payloadType: Tracks.opus), kind: .audio, ssrc: 0x5500 + UInt32(i), trackID: "TR_a")))
            subs.append(s)
        }
        #expect(try bed.connect([publisher] + subs))
        return (publisher, subs)
    }

    @Test(.timeLimit(.minutes(1)))
    func forwardsOpusToSubscriberWithOutgoingSSRCAndContiguousSequence() throws {
        let bed = try RoomWorkerHarness()
        defer { bed.stop() }
        let (publisher, subs) = try opusRoom(bed, subscribers: 1)
        let subscriber = subs[0]
        let packets = (0..<50).map { opusPacket($0, ssrc: 0xA0A0) }
        for p in packets { #expect(publisher.sendMedia(p)) }
        try UDPClient.pump([publisher, subscriber], for: .seconds(3)) { subscriber.receivedRTP.count >= 50 }

        let received = subscriber.receivedRTP
        #expect(received.count == 50)
        let headers = try received.map(header)
        #expect(headers.allSatisfy { $0.ssrc == SSRC(0x5500) && $0.payloadType == Tracks.opus })
        // Loopback keeps order; the rewriter keeps the first source's numbers.
        #expect(headers.map(\.sequenceNumber) == (0..<50).map { UInt16(1000 + $0) })
        #expect(try received.map(payload) == packets.map(payload))
        let counters = try #require(bed.counters)
        #expect(counters.forwarded == 50)
        #expect(counters.rtpPacketsIn == 50)
        #expect(counters.rtpPacketsOut == 50)
    }
}
