import DTLS
import Negotiation
import RTCP
import RTP
import SFUTesting
import Wire

/// Sends `SimulcastStream.threeLayers` at 30 fps on SSRCs signalled as an
/// `a=ssrc-group:SIM` with an RTX SSRC each; answers NACKs with RTX (RFC
/// 4588: the original sequence number, then the original payload) from the
/// last two seconds and PLIs with a keyframe on that layer.
final class SimulatedPublisher {
    static let vp8 = PayloadType(rawValue: 96)!
    static let rtx = PayloadType(rawValue: 97)!
    static let rtxSSRCs: [UInt32] = [0x2000_0001, 0x2000_0002, 0x2000_0003]
    /// Payload bytes per packet of each layer: about 0.15, 0.5 and 1.15
    /// Mbit/s at 30 fps.
    static let payloadSizes = [300, 700, 1150]

    static var trackDescription: PublishedTrackDescription {
        let stream = SimulcastStream.threeLayers()
        return PublishedTrackDescription(
            mid: "0", kind: .video, direction: .sendonly, msid: nil,
            codecs: [.vp8(payloadType: vp8, rtxPayloadType: rtx)], simulcast: [],
            sources: SignalledSources(
                cname: "publisher",
                streams: zip(stream.layers, rtxSSRCs).map { .init(ssrc: SSRC($0.ssrc), rtxSSRC: SSRC($1)) },
                isSimulcast: true),
            headerExtensions: HeaderExtensionIDs(), reducedSizeRTCP: true)
    }

    let peer: SimulatedPeer
    var stream = SimulcastStream.threeLayers()
    private(set) var nextFrame: Instant
    /// Layers not sent (a silent layer).
    var silentLayers: Set<Int> = []
    private var sent: [UInt32: [UInt16: [UInt8]]] = [:]
    private var sentOrder: [(ssrc: UInt32, sequenceNumber: UInt16)] = []
    private var rtxSequence: [UInt16] = [1, 1, 1]
    private(set) var nacksReceived = 0
    private(set) var plisReceived = 0

    init(address: TransportAddress, certificate: DTLSCertificate, seed: UInt64, now: Instant) throws {
        peer = try SimulatedPeer(address: address, certificate: certificate, now: now)
        nextFrame = now
        peer.onRTCP = { [unowned self] bytes, now in handleRTCP(bytes, now: now) }
    }

    func sendFrame(now: Instant) {
        nextFrame = now + stream.frameInterval
        for p in stream.nextFrame() where !silentLayers.contains(p.spatialLayer) {
            let payload = p.payload + [UInt8](repeating: 0x5A, count: Self.payloadSizes[p.spatialLayer])
            let packet = RTPBuilders.packet(
                payloadType: Self.vp8.rawValue, sequenceNumber: p.sequenceNumber, timestamp: p.timestamp, ssrc: p.ssrc,
                marker: p.isLastOfFrame, payload: payload)
            sent[p.ssrc, default: [:]][p.sequenceNumber] = packet
            sentOrder.append((p.ssrc, p.sequenceNumber))
            peer.send(packet, rtcp: false, now: now)
        }
        // Two seconds of history.
        let keep = 60 * 12
        if sentOrder.count > 2 * keep {
            for old in sentOrder.prefix(sentOrder.count - keep) { sent[old.ssrc]?[old.sequenceNumber] = nil }
            sentOrder.removeFirst(sentOrder.count - keep)
        }
    }

    private func handleRTCP(_ bytes: [UInt8], now: Instant) {
        guard let compound = try? RTCPCompoundPacket.parse(bytes.span.bytes) else { return }
        for packet in compound.packets {
            switch packet {
            case .transportLayerNACK(let nack):
                nacksReceived += 1
                guard let layer = stream.layers.firstIndex(where: { SSRC($0.ssrc) == nack.mediaSSRC }) else { continue }
                for pair in nack.pairs {
                    for n in pair.lostSequenceNumbers {
                        guard let original = sent[stream.layers[layer].ssrc]?[n],
                            let header = try? RTPHeader(parsing: original.span.bytes)
                        else { continue }
                        let payload = [UInt8(n >> 8), UInt8(n & 0xFF)] + Array(original[header.payloadRange])
                        let packet = RTPBuilders.packet(
                            payloadType: Self.rtx.rawValue, sequenceNumber: rtxSequence[layer],
                            timestamp: header.timestamp, ssrc: Self.rtxSSRCs[layer], marker: header.marker,
                            payload: payload)
                        rtxSequence[layer] &+= 1
                        peer.send(packet, rtcp: false, now: now)
                    }
                }
            case .pictureLossIndication(let pli):
                plisReceived += 1
                if let layer = stream.layers.firstIndex(where: { SSRC($0.ssrc) == pli.mediaSSRC }) {
                    stream.requestKeyframe(layer: layer)
                }
            default: continue
            }
        }
    }
}

/// Receives the forwarded stream: restores RTX, NACKs gaps (again after a
/// round trip, up to 10 times, for 1.5 s), reports transport-wide arrivals
/// every 50 ms (transport-cc, extension id 3 of the default subscriber
/// offer), decodes with a `VP8DecoderModel` and sends a PLI (at most every
/// 500 ms) while the model is broken.
final class SimulatedSubscriber {
    static let ssrc = SSRC(0x5B5B_0001)
    static let transportCCExtensionID: UInt8 = 3
    static let tickInterval: Duration = .milliseconds(10)
    static let feedbackInterval: Duration = .milliseconds(50)
    static let nackInterval: Duration = .milliseconds(250)

    let peer: SimulatedPeer
    var decoder = VP8DecoderModel()
    private(set) var nextTick: Instant
    private(set) var nacksSent = 0
    private(set) var plisSent = 0
    private(set) var retransmissionsReceived = 0
    private(set) var paddingReceived = 0
    private var mediaSequence = SequenceNumberUnwrapper()
    private var highest: UInt64?
    private var missing: [UInt64: (since: Instant, lastNACK: Instant?, tries: Int)] = [:]
    private var transportSequence = SequenceNumberUnwrapper()
    private var arrivals: [UInt64: Instant] = [:]
    private var nextToReport: UInt64?
    private var highestTransport: UInt64 = 0
    private var feedbackCount: UInt8 = 0
    private var lastFeedback: Instant?
    private var lastPLI: Instant?

    init(address: TransportAddress, certificate: DTLSCertificate, seed: UInt64, now: Instant) throws {
        peer = try SimulatedPeer(address: address, certificate: certificate, now: now)
        nextTick = now
        peer.onRTP = { [unowned self] bytes, now in handleRTP(bytes, now: now) }
    }

    private func handleRTP(_ bytes: [UInt8], now: Instant) {
        guard let header = try? RTPHeader(parsing: bytes.span.bytes) else { return }
        if let range = header.extensionValueRange(id: Self.transportCCExtensionID, in: bytes.span.bytes), range.count == 2 {
            let n = transportSequence.unwrap(UInt16(bytes[range.lowerBound]) << 8 | UInt16(bytes[range.lowerBound + 1]))
            if nextToReport == nil { nextToReport = n }
            if n >= (nextToReport ?? 0) { arrivals[n] = now }
            highestTransport = max(highestTransport, n)
        }
        var packet = bytes
        if header.ssrc == LossySimulation.outgoingRTXSSRC {
            guard header.payloadLength >= 2 else {
                paddingReceived += 1
                return
            }
            // RFC 4588 section 4: the original sequence number, then the
            // original payload, on the original SSRC and payload type.
            let p = header.payloadRange.lowerBound
            var restored = Array(bytes[0..<p]) + Array(bytes[(p + 2)..<header.payloadRange.upperBound])
            restored[0] &= 0xDF
            restored[1] = (restored[1] & 0x80) | SimulatedPublisher.vp8.rawValue
            restored[2] = bytes[p]
            restored[3] = bytes[p + 1]
            let media = LossySimulation.outgoingSSRC.rawValue
            for i in 0..<4 { restored[8 + i] = UInt8(truncatingIfNeeded: media >> (24 - 8 * UInt32(i))) }
            packet = restored
            retransmissionsReceived += 1
        } else if header.ssrc != LossySimulation.outgoingSSRC {
            return
        }
        guard let h = try? RTPHeader(parsing: packet.span.bytes) else { return }
        let n = mediaSequence.unwrap(h.sequenceNumber)
        if let top = highest, n > top + 1 {
            for m in (top + 1)..<n { missing[m] = (now, nil, 0) }
        }
        highest = max(highest ?? n, n)
        missing[n] = nil
        decoder.receive(packet, now: now)
    }

    func tick(now: Instant) {
        nextTick = now + Self.tickInterval
        decoder.update(now: now)
        // NACK (RFC 4585 section 6.2.1): new gaps at once, older ones again
        // after about a round trip.
        var lost: [UInt16] = []
        for (n, entry) in missing.sorted(by: { $0.key < $1.key }) {
            if now - entry.since > .milliseconds(1500) || entry.tries >= 10 {
                missing[n] = nil
                continue
            }
            if let last = entry.lastNACK, now - last < Self.nackInterval { continue }
            lost.append(UInt16(truncatingIfNeeded: n))
            missing[n] = (entry.since, now, entry.tries + 1)
        }
        if !lost.isEmpty {
            nacksSent += 1
            peer.send(
                RTCPBuilders.nack(sender: Self.ssrc, media: LossySimulation.outgoingSSRC, lost: Array(lost.prefix(200))),
                rtcp: true, now: now)
        }
        if decoder.needsKeyframe, lastPLI.map({ now - $0 >= .milliseconds(500) }) ?? true {
            lastPLI = now
            plisSent += 1
            peer.send(
                RTCPBuilders.pictureLossIndication(sender: Self.ssrc, media: LossySimulation.outgoingSSRC), rtcp: true,
                now: now)
        }
        if lastFeedback.map({ now - $0 >= Self.feedbackInterval }) ?? true {
            lastFeedback = now
            sendTransportFeedback(now: now)
        }
    }

    /// Every number from the last report to the highest seen, arrived or
    /// not (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 3.1).
    private func sendTransportFeedback(now: Instant) {
        guard let start = nextToReport, highestTransport >= start else { return }
        var pending = (start...highestTransport).compactMap { n in
            arrivals[n].map { TransportCCArrival(sequenceNumber: UInt16(truncatingIfNeeded: n), arrival: $0) }
        }
        while !pending.isEmpty {
            let built = TransportLayerCC.build(
                senderSSRC: Self.ssrc, mediaSSRC: LossySimulation.outgoingSSRC, feedbackPacketCount: feedbackCount,
                arrivals: pending)
            guard built.consumed > 0 else { break }
            feedbackCount &+= 1
            peer.send(RTCPCompoundPacket.serialize([.transportLayerCC(built.feedback)]), rtcp: true, now: now)
            pending.removeFirst(built.consumed)
        }
        for n in start...highestTransport { arrivals[n] = nil }
        nextToReport = highestTransport + 1
    }
}
