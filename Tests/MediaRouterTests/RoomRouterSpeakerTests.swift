import MediaRouter
import Negotiation
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire
import WorkerRelay

/// Active speakers from the audio level (RFC 6464) of publishers' Opus;
/// one worker per room reports them (`setSpeakerReporter`), from relayed
/// audio as well as its own.
@Suite struct RoomRouterSpeakerTests {
    static var opus: PublishedTrackDescription { TestTrack.opusDescription(mid: "1", ssrc: 0xA0A0, audioLevelID: 1) }

    static func speakers(_ events: [MediaEvent]) -> [[ParticipantID]] {
        events.compactMap { if case .activeSpeakers(_, let s) = $0 { s.map(\.participantId) } else { nil } }
    }

    @Test func onlyTheReportingWorkerAnnouncesSpeakersAndRelayedAudioCounts() throws {
        let bed = try RouterTestbed(workers: 2)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r", worker: 0)
        #expect(bed.connect())
        bed.execute(
            .addIncomingTrack(room: "r", participant: ParticipantID("PA_pub"), trackID: "TR_a", description: Self.opus), on: 0)
        bed.execute(
            .addRelayedTrack(
                room: "r", publisher: ParticipantID("PA_pub"), trackID: "TR_a", description: Self.opus,
                relay: RelayTrackID(3), from: 0), on: 1)
        bed.execute(.addRelaySink(room: "r", trackID: "TR_a", relay: RelayTrackID(3), to: 1), on: 0)
        bed.execute(.setSpeakerReporter(room: "r", false), on: 0)
        // -20 dBov speech, 20 ms apart, for a second.
        for n in 0..<50 {
            bed.send(
                RTPBuilders.packet(
                    payloadType: 111, sequenceNumber: UInt16(n), timestamp: UInt32(960 * n), ssrc: 0xA0A0,
                    extensions: [(1, [0x80 | 20])], payload: [0xF8, 0xFF, 0xFE]), from: publisher)
            bed.run(for: .milliseconds(20))
        }
        #expect(Self.speakers(bed.events[1]).first == [ParticipantID("PA_pub")])
        #expect(Self.speakers(bed.events[0]).isEmpty)
    }

    /// An Opus packet whose audio-level extension (id 1) says -`dBov` dBov.
    static func speech(_ n: Int, dBov: UInt8) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 111, sequenceNumber: UInt16(n), timestamp: UInt32(960 * n), ssrc: 0xA0A0,
            extensions: [(1, [0x80 | dBov])], payload: [0xF8, 0xFF, 0xFE])
    }

    /// A publisher whose audio level says speech becomes the room's active
    /// speaker; once it falls silent the room hears an empty list. Nobody
    /// needs to subscribe for that.
    @Test func speechLevelsMakeThePublisherTheActiveSpeakerAndSilenceEndsIt() throws {
        let bed = try RouterTestbed(workers: 1)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r", worker: 0)
        #expect(bed.connect())
        bed.execute(
            .addIncomingTrack(room: "r", participant: ParticipantID("PA_pub"), trackID: "TR_a", description: Self.opus), on: 0)
        func levels() -> [[SpeakerLevel]] {
            bed.events[0].compactMap { if case .activeSpeakers("r", let s) = $0 { s } else { nil } }
        }
        // -20 dBov (a tenth of full scale) for 1 s, 20 ms apart.
        var n = 0
        let start = bed.clock.now
        var spokeAt: Duration?
        while bed.clock.now - start < .seconds(1) {
            bed.send(Self.speech(n, dBov: 20), from: publisher)
            n += 1
            bed.run(for: .milliseconds(20))
            if spokeAt == nil, !levels().isEmpty { spokeAt = bed.clock.now - start }
        }
        // One announcement (at most every 333 ms, and only on change).
        #expect(levels().count == 1)
        let first = try #require(levels().first)
        #expect(first.map(\.participantId) == [ParticipantID("PA_pub")])
        #expect(abs((first.first?.level ?? 0) - 0.05) < 0.051)
        #expect(try #require(spokeAt) <= .milliseconds(500))
        // Silence (-127 dBov) for 2 s: the list empties, once.
        for _ in 0..<100 {
            bed.send(Self.speech(n, dBov: 127), from: publisher)
            n += 1
            bed.run(for: .milliseconds(20))
        }
        #expect(levels().count == 2)
        #expect(levels().last == [])
    }
}
