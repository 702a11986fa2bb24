import MediaRouter
import Negotiation
import RTP
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire
import WorkerRelay

/// Dynacast across workers: the far side says what its subscribers need
/// (`RelayFeedback.layerDemand`) instead of telling the publisher, and the
/// source worker tells the publisher the union.
@Suite struct RoomRouterDynacastTests {
    static let relay = RelayTrackID(9)
    static let rids: [RID] = ["q", "h", "f"]

    /// Three rid layers, recognised by the mid and rid extensions.
    static var description: PublishedTrackDescription {
        var ids = HeaderExtensionIDs()
        ids.mid = 1
        ids.rtpStreamID = 2
        return PublishedTrackDescription(
            mid: "0", kind: .video, direction: .sendonly, msid: nil, codecs: [.vp8(payloadType: TestTrack.vp8)],
            simulcast: rids.map { SimulcastLayer(rid: $0) }, sources: nil, headerExtensions: ids, reducedSizeRTCP: true)
    }

    static func layers(_ events: [MediaEvent]) -> [[Bool]] {
        events.compactMap { e in
            if case .publisherLayers(_, _, _, let layers) = e { layers.map(\.active) } else { nil }
        }
    }

    /// The layer demands the far worker sent, in order.
    func demands(_ bed: RouterTestbed) -> [UInt8] {
        (bed.feedback[1][0]?.feedbackCarried ?? []).compactMap { f in
            if case .layerDemand(_, let layers) = f { layers } else { nil }
        }
    }

    /// The same demand decides which layers cross: once the far worker
    /// has said, a layer none of its subscribers needs stays on the source
    /// worker, the lowest always crosses, and the subscriber keeps getting
    /// media through a switch down (the layer it is on crosses until the
    /// switch is done).
    @Test func theRelayCarriesOnlyTheLayersTheFarSideNeeds() throws {
        let room = try RelayedTrackRoom()
        let bed = room.bed
        let far = room.far
        func send(for duration: Duration) { room.send(for: duration) }
        let ring = try #require(bed.media[0][1])
        // Until the far worker has said, every layer crosses.
        send(for: .milliseconds(20))
        #expect(demands(bed).isEmpty)
        #expect(ring.mediaCarriedPerLayer[0] > 0 && ring.mediaCarriedPerLayer[2] > 0)
        send(for: .seconds(1))
        #expect(demands(bed).last == 0b111)
        #expect(bed.routers[0].counters.relayPacketsNotWanted == 0)

        var preference = ReceivePreference()
        preference.maxLayer = 0
        bed.execute(
            .setPreference(room: "r", trackID: "TR_v", subscriber: ParticipantID("PA_far"), preference: preference), on: 1)
        // The switch down waits for a keyframe of layer 0 (one a second
        // here, the next about 900 ms away), and layer 2 keeps crossing
        // until it is done: the subscriber is still on it. Layer 1 stops at
        // once: capped at layer 0, the subscriber may never take it.
        let atSwitch = ring.mediaCarriedPerLayer[2]
        send(for: .milliseconds(300))
        #expect(demands(bed).last == 0b101)
        #expect(ring.mediaCarriedPerLayer[2] > atSwitch)
        send(for: .milliseconds(1000))
        #expect(demands(bed).last == 0b001)
        // From here on only the lowest layer crosses.
        let before = ring.mediaCarriedPerLayer
        let received = far.rtp.count
        send(for: .milliseconds(500))
        #expect(ring.mediaCarriedPerLayer[2] == before[2])
        #expect(ring.mediaCarriedPerLayer[0] > before[0])
        #expect(ring.mediaCarriedPerLayer[1] == before[1])
        #expect(bed.routers[0].counters.relayPacketsNotWanted > 0)
        // The far subscriber, on layer 0 now, still gets every frame.
        #expect(far.rtp.count > received)
    }

    /// A far subscriber capped at the lowest layer gets only that layer
    /// over its relay; when its cap rises, its worker asks for the top
    /// layer at once: the source reports every layer's bitrate each second
    /// (`RelayedLayerBitrates`), so the far allocator prices layers the
    /// relay does not carry instead of waiting for them to cross and be
    /// measured (a second per layer, which made a Chromium upgrade on four
    /// workers slower than its 2 s bound).
    @Test func aFarSubscriberWhoseCapRisesAsksForTheTopLayerBeforeItCrosses() throws {
        let room = try RelayedTrackRoom()
        let bed = room.bed
        let far = room.far
        func send(for duration: Duration) { room.send(for: duration) }
        var preference = ReceivePreference()
        preference.maxLayer = 0
        bed.execute(
            .setPreference(room: "r", trackID: "TR_v", subscriber: ParticipantID("PA_far"), preference: preference), on: 1)
        send(for: .milliseconds(2500))
        #expect(demands(bed).last == 0b001)
        let ring = try #require(bed.media[0][1])
        let reports = try #require(ring.layerBitratesCarried.last)
        #expect(reports[0, 0] > 0 && reports[2, 0] > 0, "the source measures every layer: \(reports)")
        #expect(bed.routers[1].counters.relayLayerBitratesReceived > 0)
        let atRise = ring.mediaCarriedPerLayer
        send(for: .milliseconds(500))
        #expect(ring.mediaCarriedPerLayer[1] == atRise[1] && ring.mediaCarriedPerLayer[2] == atRise[2])

        bed.execute(
            .setPreference(room: "r", trackID: "TR_v", subscriber: ParticipantID("PA_far"), preference: ReceivePreference()),
            on: 1)
        let before = ring.mediaCarriedPerLayer
        var askedAfter: Duration?
        var waited: Duration = .zero
        while askedAfter == nil, waited < .milliseconds(600) {
            send(for: .milliseconds(50))
            waited += .milliseconds(50)
            if let last = demands(bed).last, last & 0b100 != 0 {
                askedAfter = waited
                // Asked before any packet of the upper layers crossed.
                #expect(ring.mediaCarriedPerLayer[1] == before[1] && ring.mediaCarriedPerLayer[2] == before[2])
            }
        }
        #expect(askedAfter != nil, "demands \(demands(bed).suffix(4))")
        // Then the top layer crosses and the subscriber switches to it.
        let received = far.rtp.count
        send(for: .milliseconds(1500))
        #expect(ring.mediaCarriedPerLayer[2] > before[2])
        #expect(far.rtp.count > received)
        let announced = bed.events[1].compactMap { e -> Int? in
            if case .streamState(_, _, _, _, let layer, _) = e { layer } else { nil }
        }
        #expect(announced.last == 2, "stream-state layers \(announced)")
    }

    /// Where every test here starts: PA_pub on worker 0 publishes TR_v
    /// (three rid layers of VP8), PA_far on worker 1 receives it over the
    /// relay; `send` plays the stream for a stretch of virtual time.
    final class RelayedTrackRoom {
        let bed: RouterTestbed
        let publisher: TestPeer
        let far: TestPeer
        private var stream = SimulcastStream.threeLayers(temporalPattern: [0])
        private var next: Instant

        init() throws {
            bed = try RouterTestbed(workers: 2)
            publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r", worker: 0)
            far = try bed.addPeer("PA_far", role: .subscriber, room: "r", worker: 1)
            #expect(bed.connect())
            RoomRouterDynacastTests.relayTrack(on: bed)
            next = bed.clock.now
        }

        func send(for duration: Duration) {
            RoomRouterDynacastTests.sendFrames(&stream, next: &next, from: publisher, on: bed, for: duration)
        }
    }

    /// The relay of TR_v from worker 0 to worker 1, with one subscriber on 1.
    /// The far side says its demand again every second though it did not
    /// change: a sink the source added again (a cluster node's wants read
    /// again from Redis) starts without a demand, and the publisher's
    /// layers would otherwise stay at the lowest for good. Seen with
    /// three processes: far subscribers stuck at 180p.
    @Test func aSinkAddedAgainHearsTheDemandWithinASecond() throws {
        let room = try RelayedTrackRoom()
        let bed = room.bed
        func send(for duration: Duration) { room.send(for: duration) }
        send(for: .seconds(1))
        let settled = try #require(Self.layers(bed.events[0]).last)
        #expect(settled == [true, true, true])
        let sent = demands(bed).count
        bed.execute(.removeRelaySink(room: "r", trackID: "TR_v", to: 1), on: 0)
        bed.execute(.addRelaySink(room: "r", trackID: "TR_v", relay: Self.relay, to: 1), on: 0)
        // Until the far side says again, the new sink counts for no layer
        // at the publisher (before the periodic demand, for good).
        send(for: .milliseconds(1200))
        #expect(demands(bed).count > sent)
        #expect(Self.layers(bed.events[0]).last == settled)
    }

    static func relayTrack(on bed: RouterTestbed) {
        bed.execute(
            .addIncomingTrack(room: "r", participant: ParticipantID("PA_pub"), trackID: "TR_v", description: Self.description),
            on: 0)
        bed.execute(
            .addRelayedTrack(
                room: "r", publisher: ParticipantID("PA_pub"), trackID: "TR_v", description: Self.description,
                relay: Self.relay, from: 0), on: 1)
        bed.execute(.addRelaySink(room: "r", trackID: "TR_v", relay: Self.relay, to: 1), on: 0)
        bed.execute(
            .forward(
                room: "r", trackID: "TR_v", subscriber: ParticipantID("PA_far"),
                outgoing: TestTrack.outgoing(trackID: "TR_v", publisher: "PA_pub")), on: 1)
    }

    /// Frames of `stream` from `publisher` for `duration` of virtual time.
    static func sendFrames(
        _ stream: inout SimulcastStream, next: inout Instant, from publisher: TestPeer, on bed: RouterTestbed,
        for duration: Duration
    ) {
        let end = bed.clock.now + duration
        while bed.clock.now < end {
            bed.run(for: .milliseconds(5))
            guard bed.clock.now >= next else { continue }
            next = next + stream.frameInterval
            for p in stream.nextFrame() {
                let packet = RTPBuilders.packet(
                    payloadType: 96, sequenceNumber: p.sequenceNumber, timestamp: p.timestamp, ssrc: p.ssrc,
                    marker: p.isLastOfFrame,
                    extensions: [(1, Array("0".utf8)), (2, Array(Self.rids[p.spatialLayer].description.utf8))],
                    payload: p.payload)
                bed.send(packet, from: publisher)
            }
        }
    }

    @Test func theSourceAnnouncesWhatFarSubscribersNeed() throws {
        let room = try RelayedTrackRoom()
        let bed = room.bed
        func send(for duration: Duration) { room.send(for: duration) }
        send(for: .seconds(1))
        // The far subscriber gets the top layer: every layer stays on at
        // the publisher though no subscriber on the source worker wants one.
        #expect(Self.layers(bed.events[0]).last == [true, true, true])
        #expect(demands(bed).last == 0b111)
        // The far worker never tells the publisher itself.
        #expect(Self.layers(bed.events[1]).isEmpty)

        var preference = ReceivePreference()
        preference.maxLayer = 0
        bed.execute(
            .setPreference(room: "r", trackID: "TR_v", subscriber: ParticipantID("PA_far"), preference: preference), on: 1)
        // The switch down waits for a keyframe of layer 0 (one a second
        // here): the subscriber's current layer stays on until then.
        send(for: .milliseconds(1300))
        // Only layer 0 stays on: the subscriber may not take another.
        #expect(demands(bed).last == 0b001)
        #expect(Self.layers(bed.events[0]).last == [true, false, false])

        // The relay ends: only the lowest layer stays on.
        bed.execute(.removeRelaySink(room: "r", trackID: "TR_v", to: 1), on: 0)
        send(for: .milliseconds(200))
        #expect(Self.layers(bed.events[0]).last == [true, false, false])
    }
}
