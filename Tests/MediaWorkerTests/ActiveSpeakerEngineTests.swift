import Foundation
import MediaWorker
import Rooms
import SFUTesting
import Testing
import Wire

@Suite struct ActiveSpeakerEngineTests {
    /// An Opus packet whose audio-level extension (id 1) says -`dBov` dBov.
    private func speech(_ n: Int, dBov: UInt8) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 111, sequenceNumber: UInt16(n), timestamp: UInt32(960 * n), ssrc: 0xA0A0,
            extensions: [(1, [0x80 | dBov])], payload: [0xF8, 0xFF, 0xFE])
    }

    private func speakerEvents(_ bed: RoomWorkerHarness) -> [[SpeakerLevel]] {
        bed.events.all.compactMap { if case .activeSpeakers("r1", let s) = $0 { s } else { nil } }
    }

    /// A publisher whose audio level says speech becomes the room's active
    /// speaker; once it falls silent the room hears an empty list. Nobody
    /// needs to subscribe for that.
    @Test(.timeLimit(.minutes(1)))
    func speechLevelsMakeThePublisherTheActiveSpeakerAndSilenceEndsIt() throws {
        let bed = try RoomWorkerHarness()
        defer { bed.stop() }
        let publisher = try UDPClient(certificate: bed.certificate)
        try bed.open(publisher, room: "r1", participant: "PA_pub", role: .publisher)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_a",
                description: Tracks.opusTrack(ssrc: 0xA0A0, audioLevelID: 1)))
        #expect(try bed.connect([publisher]))

        var n = 0
        // -20 dBov (a tenth of full scale) for up to 2 s, 20 ms apart.
        let end = Date().addingTimeInterval(2)
        while speakerEvents(bed).isEmpty, Date() < end {
            publisher.sendMedia(speech(n, dBov: 20))
            n += 1
            try UDPClient.pump([publisher], for: .milliseconds(20))
        }
        let first = try #require(speakerEvents(bed).first)
        #expect(first.map(\.participantId) == [ParticipantID("PA_pub")])
        #expect(abs((first.first?.level ?? 0) - 0.05) < 0.051)
        // Silence (-127 dBov): within a few rounds the list empties.
        let quietEnd = Date().addingTimeInterval(3)
        while speakerEvents(bed).last?.isEmpty != true, Date() < quietEnd {
            publisher.sendMedia(speech(n, dBov: 127))
            n += 1
            try UDPClient.pump([publisher], for: .milliseconds(20))
        }
        let events = speakerEvents(bed)
        #expect(events.last == [])
        #expect(events.count == 2)
    }
}
