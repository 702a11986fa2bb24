import Foundation
import Synchronization
import Testing
import WorkerRelay

@Suite struct RingRelayLinksTests {
    @Test func aSourceLinkCountsSentFullAndRefusedAndNeverBlocks() {
        let ring = PacketRing(capacity: 2, slotSize: RelayMessage.slotSize(forPacketsUpTo: 64))
        let link = RingRelaySourceLink(ring: ring)
        let packet = [UInt8](repeating: 1, count: 64)
        let long = [UInt8](repeating: 1, count: 65)
        #expect(!link.takeWake())
        packet.withUnsafeBytes { p in
            #expect(link.sendMedia(RelayTrackID(1), layer: 0, isRetransmission: false, packet: p))
            #expect(link.sendSenderReport(RelayTrackID(1), layer: 0, ntp: 5, rtpTimestamp: 6))
            // Full: returns at once, counted.
            #expect(!link.sendMedia(RelayTrackID(1), layer: 0, isRetransmission: false, packet: p))
        }
        long.withUnsafeBytes { p in
            #expect(!link.sendMedia(RelayTrackID(1), layer: 0, isRetransmission: false, packet: p))
        }
        #expect(link.counters.values.sent == 2)
        // The long packet meets a full ring first: counted as full.
        #expect(link.counters.values.droppedFull == 2)
        #expect(link.counters.values.refused == 0, "a full ring is checked before the packet")
        #expect(link.takeWake())
        #expect(!link.takeWake(), "one wake per batch")
        _ = ring.drain(limit: 10) { _ in }
        long.withUnsafeBytes { p in
            #expect(!link.sendMedia(RelayTrackID(1), layer: 0, isRetransmission: false, packet: p))
        }
        #expect(link.counters.values.refused == 1)
        #expect(!link.takeWake())
    }

    @Test func aFeedbackLinkCarriesEachCase() {
        let ring = PacketRing(capacity: 8, slotSize: 32)
        let link = RingRelayFeedbackLink(ring: ring)
        let sent: [RelayFeedback] = [
            .keyframeRequest(RelayTrackID(4), layer: 1), .nack(RelayTrackID(4), layer: 0, packetID: 100, lostBitmask: 3),
            .layerDemand(RelayTrackID(4), layers: 1),
        ]
        for f in sent { #expect(link.sendFeedback(f)) }
        #expect(!link.sendFeedback(.keyframeRequest(RelayTrackID(4), layer: 9)))
        #expect(link.counters.values.refused == 1)
        var got: [RelayFeedback] = []
        _ = ring.drainMessages(limit: 8) { if case .feedback(let f) = $0 { got.append(f) } }
        #expect(got == sent)
    }

    /// A producer thread and a consumer thread over a small ring: every
    /// message arrives once and in order, or the producer counted it
    /// dropped; nothing else. Bounded: the consumer gives up after 10 s.
    @Test func twoThreadsDeliverInOrderOrCountDrops() throws {
        let total = 200_000
        let ring = PacketRing(capacity: 64, slotSize: RelayMessage.slotSize(forPacketsUpTo: 64))
        let link = RingRelaySourceLink(ring: ring)
        let shared = ProducerResult()
        let producer = Thread {
            var lost: [UInt32] = []
            var packet = [UInt8](repeating: 0, count: 64)
            for i in 0..<UInt32(total) {
                // The sequence number in the track id and in the bytes, and
                // a length that varies with it.
                packet.withUnsafeMutableBytes { $0.storeBytes(of: i, as: UInt32.self) }
                let ok = packet.withUnsafeBytes { p in
                    link.sendMedia(
                        RelayTrackID(i), layer: Int(i % 3), isRetransmission: i % 7 == 0,
                        packet: UnsafeRawBufferPointer(rebasing: p[0..<(4 + Int(i % 60))]))
                }
                if !ok { lost.append(i) }
            }
            shared.dropped.withLock { $0 = lost }
            shared.done.store(true, ordering: .releasing)
        }
        producer.start()
        var received: [UInt32] = []
        received.reserveCapacity(total)
        var bad = 0
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let finished = shared.done.load(ordering: .acquiring)
            let (_, malformed) = ring.drainMessages(limit: 32) { message in
                guard case .media(let track, let layer, let rtx, let packet) = message else { bad += 1; return }
                let i = track.rawValue
                let ok =
                    packet.count == 4 + Int(i % 60) && packet.loadUnaligned(as: UInt32.self) == i && layer == Int(i % 3)
                    && rtx == (i % 7 == 0)
                if !ok { bad += 1 }
                received.append(i)
            }
            bad += malformed
            if finished && ring.count == 0 { break }
        }
        let finished = shared.done.load(ordering: .acquiring)
        #expect(finished, "the producer finished within the time")
        let lost = shared.dropped.withLock { $0 }
        #expect(bad == 0)
        #expect(received.count + lost.count == total)
        #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 }, "in order, each once")
        #expect(Set(received).isDisjoint(with: lost))
        let (sent, full) = (link.counters.values.sent, link.counters.values.droppedFull)
        #expect(sent == UInt64(received.count))
        #expect(full == UInt64(lost.count))
    }
}

/// What the producer thread hands back.
final class ProducerResult: Sendable {
    let dropped = Mutex<[UInt32]>([])
    let done = Atomic<Bool>(false)
}
