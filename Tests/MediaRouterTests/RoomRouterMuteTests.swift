import MediaRouter
import RTP
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire

/// `MediaCommand.setTrackMuted` (the server API's mute, and a publisher's
/// own): a muted track passes nothing on; unmuted, it flows again and a
/// video publisher is asked for a keyframe.
@Suite struct RoomRouterMuteTests {
    @Test func aMutedTrackReachesNoSubscriberUntilUnmuted() throws {
        let (bed, publisher, subs) = try RoomRouterForwardingTests.opusRoom(subscribers: 2)
        RoomRouterForwardingTests.sendOpus(0..<10, from: publisher, on: bed)
        #expect(subs.map(\.rtp.count) == [10, 10])
        bed.execute(.setTrackMuted(room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_a", muted: true), on: 0)
        RoomRouterForwardingTests.sendOpus(10..<30, from: publisher, on: bed)
        #expect(subs.map(\.rtp.count) == [10, 10])
        #expect(bed.routers[0].counters.filtered.muted == 20)
        bed.execute(.setTrackMuted(room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_a", muted: false), on: 0)
        RoomRouterForwardingTests.sendOpus(30..<40, from: publisher, on: bed)
        #expect(subs.map(\.rtp.count) == [20, 20])
        // An unknown track is ignored and counted, as any late command.
        let ignored = bed.routers[0].counters.commandsIgnored
        bed.execute(.setTrackMuted(room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_x", muted: true), on: 0)
        #expect(bed.routers[0].counters.commandsIgnored == ignored + 1)
    }

    @Test func unmutingVideoAsksThePublisherForAKeyframe() throws {
        let (bed, publisher, subscriber) = try RoomRouterForwardingTests.vp8Room()
        func send(_ n: Int, keyframe: Bool) {
            bed.send(
                RTPBuilders.packet(
                    payloadType: 96, sequenceNumber: UInt16(n), timestamp: UInt32(3000 * n), ssrc: 0xB0B0,
                    payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: keyframe)), from: publisher)
            bed.run(for: .milliseconds(33))
        }
        send(0, keyframe: true)
        send(1, keyframe: false)
        #expect(subscriber.rtp.count == 2)
        bed.execute(.setTrackMuted(room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v", muted: true), on: 0)
        for n in 2..<6 { send(n, keyframe: false) }
        #expect(subscriber.rtp.count == 2)
        bed.run(for: .seconds(1))
        let before = publisher.pictureLossIndications(for: SSRC(0xB0B0))
        bed.execute(.setTrackMuted(room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v", muted: false), on: 0)
        bed.run(for: .milliseconds(50))
        #expect(publisher.pictureLossIndications(for: SSRC(0xB0B0)) == before + 1)
        send(6, keyframe: true)
        #expect(subscriber.rtp.count == 3)
    }
}
