import MediaWorker
import Negotiation
import RTCP
import Rooms
import SFUTesting
import Testing
import Wire

@Suite struct TransportFeedbackEngineTests {
    /// A publisher's packets carry transport-wide sequence numbers (id 5
    /// here); the worker reports their arrival back in transport-cc
    /// feedback, losses included, so the publisher's estimate can grow.
    @Test(.timeLimit(.minutes(1)))
    func publishersGetTransportWideFeedbackForEveryNumberLostOrReceived() throws {
        let bed = try RoomWorkerHarness()
        defer { bed.stop() }
        let publisher = try UDPClient(certificate: bed.certificate)
        try bed.open(publisher, room: "r1", participant: "PA_pub", role: .publisher)
        var description = Tracks.vp8Track(ssrc: 0xB0B0)
        description.headerExtensions.transportWideSequenceNumber = 5
        bed.execute(
            .addIncomingTrack(room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v", description: description))
        #expect(try bed.connect([publisher]))

        // Numbers 100...139, 120 lost.
        for n in 0..<40 where n != 20 {
            publisher.sendMedia(
                RTPBuilders.packet(
                    payloadType: 96, sequenceNumber: UInt16(n), timestamp: UInt32(3000 * n), ssrc: 0xB0B0,
                    extensions: [(5, [0, UInt8(100 + n)])],
                    payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0)))
        }
        func reported() -> [TransportCCPacketResult] {
            publisher.receivedRTCP.flatMap { r in
                r.packets.compactMap { if case .transportLayerCC(let f) = $0 { f } else { nil } }
            }.flatMap(\.packets)
        }
        try UDPClient.pump([publisher], for: .seconds(3)) { reported().last?.sequenceNumber == 139 }
        let results = reported()
        #expect(results.map(\.sequenceNumber) == (100..<140).map { UInt16($0) })
        #expect(results.filter { $0.arrival == nil }.map(\.sequenceNumber) == [120])
        let counters = try #require(bed.counters)
        #expect(counters.transportFeedbackSent >= 1)
    }
}
