import MediaRouter
import RTCP
import RoomProtocol
import SFUTesting
import Testing
import Wire
import WorkerRelay

/// The recorder as a track sink (docs/RECORDING.md): the source worker
/// copies each packet and Sender Report of a recorded track into its
/// recorder link, and the recorder's keyframe requests reach the
/// publisher through the router's throttle.
@Suite struct RoomRouterRecorderSinkTests {
    static let relay = RelayTrackID(3)

    @Test func aRecordedTrackCrossesToTheRecorderWithItsSenderReportsAndStopsWhenRemoved() throws {
        var room = try RoomRouterRelayTests.Room(workers: 1, subscribers: [1])
        let recorder = RelayRing()
        room.bed.routers[0].connectRecorder(recorder)
        room.stream(for: .milliseconds(300))
        // A report before the sink: sent to the recorder when it is added.
        let info = SenderInfo(ntpTimestamp: 0xE000_0000_8000_0000, rtpTimestamp: 123_456, packetCount: 10, octetCount: 1000)
        room.bed.send(
            RTCPBuilders.senderReportWithCNAME(sender: SSRC(TestTrack.mediaSSRC), cname: "publisher", info: info),
            from: room.publisher, rtcp: true)
        room.bed.execute(.addRecorderSink(room: "r", trackID: "TR_v", relay: Self.relay), on: 0)
        #expect(recorder.senderReportsCarried.count == 1)
        #expect(recorder.senderReportsCarried.first?.ntp == info.ntpTimestamp)
        let before = room.sent.count
        room.stream(for: .seconds(1))
        #expect(recorder.mediaCarried == room.sent.count - before)
        #expect(recorder.mediaCarried > 20)
        // The local subscriber is served as before.
        #expect(room.subscribers[0][0].rtp.count == room.sent.count)

        room.bed.execute(.removeRecorderSink(room: "r", trackID: "TR_v"), on: 0)
        let carried = recorder.mediaCarried
        room.stream(for: .milliseconds(300))
        #expect(recorder.mediaCarried == carried)
    }

    @Test func theRecordersKeyframeRequestReachesThePublisherThroughTheThrottle() throws {
        var room = try RoomRouterRelayTests.Room(workers: 1, subscribers: [0])
        let recorder = RelayRing()
        room.bed.routers[0].connectRecorder(recorder)
        room.bed.execute(.addRecorderSink(room: "r", trackID: "TR_v", relay: Self.relay), on: 0)
        room.stream(for: .milliseconds(300))
        let media = SSRC(TestTrack.mediaSSRC)
        let before = room.publisher.pictureLossIndications(for: media)
        for _ in 0..<2 {
            room.bed.routers[0].receiveRelayFeedback(
                .keyframeRequest(Self.relay, layer: 0), from: RoomRouter.recorderSlot, now: room.bed.clock.now,
                output: room.bed.outputs[0])
            room.bed.routers[0].flushAll(output: room.bed.outputs[0])
            room.bed.pump()
        }
        room.stream(for: .milliseconds(50))
        // Two requests within the throttle window: one PLI.
        #expect(room.publisher.pictureLossIndications(for: media) == before + 1)
    }

    @Test func aRecorderSinkWithoutARecorderOrForAnUnknownTrackIsIgnored() throws {
        let room = try RoomRouterRelayTests.Room(workers: 1, subscribers: [0])
        let ignored = room.bed.routers[0].counters.commandsIgnored
        room.bed.execute(.addRecorderSink(room: "r", trackID: "TR_v", relay: Self.relay), on: 0)
        room.bed.routers[0].connectRecorder(RelayRing())
        room.bed.execute(.addRecorderSink(room: "r", trackID: "TR_nope", relay: Self.relay), on: 0)
        #expect(room.bed.routers[0].counters.commandsIgnored == ignored + 2)
    }
}
