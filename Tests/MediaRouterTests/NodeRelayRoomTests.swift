import MediaRouter
import RTCP
import RTP
import SFUTesting
import Testing
import Wire
import WorkerRelay

/// A room cascaded over nodes (issue #15): the worker relay's messages
/// over each node pair's DTLS-SRTP relay transport (`NodeRelayFraming`)
/// instead of rings, on a virtual clock with real DTLS-SRTP peers
/// (`RouterTestbed(overNodeRelays: true)`: each router stands for a node).
@Suite struct NodeRelayRoomTests {
    typealias Room = RoomRouterRelayTests.Room

    @Test func farNodesForwardTheSameStreamAsTheSourceNodeEachPacketCrossingOnce() throws {
        var room = try Room(workers: 3, subscribers: [1, 2, 1], overNodeRelays: true)
        room.stream(for: .seconds(2))
        let streams = room.subscribers.map { $0.map { RoomRouterRelayTests.received($0.rtp) } }
        #expect(room.sent.count > 100)
        #expect(streams[0][0].count == room.sent.count)
        #expect(streams[1][0] == streams[0][0] && streams[1][1] == streams[0][0])
        #expect(streams[2][0] == streams[0][0])
        for w in 1...2 {
            // Once per packet per far node, whatever its subscriber count.
            #expect(room.bed.routers[w].counters.relayPacketsIn == UInt64(room.sent.count))
        }
        #expect(room.bed.routers[0].counters.relayPacketsOut == UInt64(2 * room.sent.count))
        #expect(room.bed.routers[0].counters.relayDrops == 0)
        #expect(room.bed.routers.allSatisfy { $0.counters.dropped.malformed == 0 })
        // Per peer node (what /metrics shows): each relay carried every
        // packet once, each way counted on its side.
        for w in 1...2 {
            let out = try #require(room.bed.routers[0].nodeRelayTraffic["node-\(w)"])
            let into = try #require(room.bed.routers[w].nodeRelayTraffic["node-0"])
            #expect(out.mediaPacketsOut == UInt64(room.sent.count))
            #expect(into.mediaPacketsIn == out.mediaPacketsOut && into.mediaBytesIn == out.mediaBytesOut)
            #expect(out.mediaPacketsIn == 0)
        }
        // Nothing crossed between the two far nodes.
        #expect(room.bed.routers[1].nodeRelayTraffic["node-2"]?.mediaPacketsOut == 0)
    }

    @Test func aFarPLIReachesThePublisherThroughTheRelay() throws {
        var room = try Room(workers: 2, subscribers: [0, 1], overNodeRelays: true)
        room.stream(for: .seconds(1))
        let media = SSRC(TestTrack.mediaSSRC)
        let before = room.publisher.pictureLossIndications(for: media)
        room.bed.send(
            RTCPBuilders.pictureLossIndication(sender: SSRC(1), media: TestTrack.outgoingSSRC), from: room.subscribers[1][0],
            rtcp: true)
        room.stream(for: .milliseconds(50))
        #expect(room.publisher.pictureLossIndications(for: media) == before + 1)
        #expect(room.bed.routers[0].counters.relayFeedbackReceived >= 1)
    }

    @Test func aPacketTheRelayLostIsNACKedUpstreamAndResentHopByHop() throws {
        var room = try Room(workers: 2, subscribers: [0, 1], overNodeRelays: true)
        room.stream(for: .milliseconds(500))
        // The relay link loses one datagram of node 0's.
        let bed = room.bed
        var armed = true
        room.stream(for: .milliseconds(100)) { _ in
            if armed {
                armed = false
                bed.dropRelayDatagrams[0] = 1
            }
        }
        let subscriber = room.subscribers[1][0]
        let seqs = RoomRouterRelayTests.received(subscriber.rtp).map(\.sequenceNumber)
        let gap = try #require(zip(seqs, seqs.dropFirst()).first { $1 &- $0 == 2 }).0 &+ 1
        room.bed.send(
            RTCPBuilders.nack(sender: SSRC(1), media: TestTrack.outgoingSSRC, lost: [gap]), from: subscriber, rtcp: true)
        room.stream(for: .milliseconds(50))
        #expect(room.bed.routers[1].counters.relayNACKsSent == 1)
        #expect(room.bed.routers[0].counters.relayRetransmissionsSent == 1)
        #expect(
            RoomRouterRelayTests.received(subscriber.rtp).contains {
                $0.ssrc == TestTrack.outgoingSSRC && $0.sequenceNumber == gap
            })
        // Repaired between the nodes: the publisher was not asked.
        #expect(room.publisher.nacks.isEmpty)
    }

    @Test func thePublishersSenderReportsCrossTheRelay() throws {
        var room = try Room(workers: 2, subscribers: [0, 1], overNodeRelays: true)
        room.stream(for: .milliseconds(300))
        let info = SenderInfo(ntpTimestamp: 0xE000_0000_8000_0000, rtpTimestamp: 123_456, packetCount: 10, octetCount: 1000)
        let before = room.bed.routers[1].counters.dropped.unknownRelay
        // Node 0 sends node 1 control packets only for sender reports
        // (feedback flows the other way): the report is one more.
        let controlIn = room.bed.routers[1].nodeRelayTraffic["node-0"]?.controlPacketsIn ?? 0
        let controlOut = room.bed.routers[0].nodeRelayTraffic["node-1"]?.controlPacketsOut ?? 0
        room.bed.send(
            RTCPBuilders.senderReportWithCNAME(sender: SSRC(TestTrack.mediaSSRC), cname: "publisher", info: info),
            from: room.publisher, rtcp: true)
        room.stream(for: .milliseconds(20))
        #expect(room.bed.routers[0].nodeRelayTraffic["node-1"]?.controlPacketsOut == controlOut + 1)
        #expect(room.bed.routers[1].nodeRelayTraffic["node-0"]?.controlPacketsIn == controlIn + 1)
        #expect(room.bed.routers[1].counters.dropped.unknownRelay == before)
        #expect(room.bed.routers.allSatisfy { $0.counters.dropped.malformed == 0 })
    }
}
