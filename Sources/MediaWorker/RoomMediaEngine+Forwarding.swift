import Codecs
import Forwarding
import NetIO
import PeerSession
import RTP
import RTPStreams
import SRTP
import Wire

// The per-packet path. Nothing here allocates: lookups in dictionaries
// built by commands, value types on the stack, and a non-escaping closure
// that writes straight into the transmit slot.

extension RoomMediaEngine {
    /// One decrypted RTP packet from transport `id`, in `buffer[0..<length]`.
    /// The buffer is read only: every subscriber's copy is rewritten in its
    /// own transmit slot.
    func handleRTP(
        from id: TransportID, length: Int, in buffer: UnsafeMutableRawBufferPointer, now: Instant, transmit: TransmitQueue
    ) {
        counters.rtpPacketsIn &+= 1
        counters.rtpBytesIn &+= UInt64(length)
        guard length <= buffer.count else { return counters.dropped.malformed &+= 1 }
        let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        let header: RTPHeader
        do { header = try RTPHeader(parsing: RawSpan(_unsafeBytes: packet)) } catch {
            return counters.dropped.malformed &+= 1
        }
        guard let routes = routesByTransport[id] else { return counters.dropped.unknownSource &+= 1 }
        // Every packet counts for transport-cc feedback, RTX and padding
        // probes included (the publisher's probing depends on them).
        if let ccID = routes.transportCCExtensionID,
            let range = header.extensionValueRange(id: ccID, in: RawSpan(_unsafeBytes: packet)), range.count == 2
        {
            let number = UInt16(packet[range.lowerBound]) << 8 | UInt16(packet[range.lowerBound + 1])
            routes.feedback.record(transportSequenceNumber: number, arrival: now)
        }
        guard let (track, layer) = resolveTrack(header, packet: packet, routes: routes) else { return }
        guard let format = track.formats[header.payloadType] else {
            return counters.dropped.unknownPayloadType &+= 1
        }
        if track.layers[layer].reception?.ssrc != header.ssrc {
            track.layers[layer].reception = ReceptionStatistics(ssrc: header.ssrc, clockRate: format.clockRate)
            track.layers[layer].keyframeRequests.mediaSSRC = header.ssrc
            track.layers[layer].ssrc = header.ssrc
        }
        _ = track.layers[layer].reception?.record(
            sequenceNumber: header.sequenceNumber, timestamp: header.timestamp, arrival: now)
        track.layers[layer].lastArrival = now

        // What a decoder needs to know of the payload: the keyframe start
        // (the only place a subscriber can begin) and, for VP8, the picture
        // ID and TL0PICIDX fields the rewriter keeps continuous and the
        // temporal layer.
        var vp8: VP8PayloadDescriptor?
        let isSwitchPoint: Bool
        let payload = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: packet[header.payloadRange]))
        switch format.codec {
        case .opus:
            isSwitchPoint = true
            if let levelID = track.description.headerExtensions.audioLevel,
                let range = header.extensionValueRange(id: levelID, in: RawSpan(_unsafeBytes: packet)), range.count >= 1
            {
                track.audioLevels.record(dBov: packet[range.lowerBound] & 0x7F)
            }
        case .video(.vp8):
            guard header.payloadLength > 0 else {
                isSwitchPoint = false
                break
            }
            do { vp8 = try VP8PayloadDescriptor(parsing: payload) } catch { return counters.dropped.malformed &+= 1 }
            isSwitchPoint = vp8?.isKeyframe ?? false
            if let w = vp8?.keyframeWidth, let h = vp8?.keyframeHeight {
                track.layers[layer].width = Int(w)
                track.layers[layer].height = Int(h)
            }
        case .video(.h264):
            guard header.payloadLength > 0 else {
                isSwitchPoint = false
                break
            }
            do { isSwitchPoint = try H264PayloadDescriptor(parsing: payload).isKeyframe } catch {
                return counters.dropped.malformed &+= 1
            }
        case .video:
            // VP9 and AV1 descriptors are not read yet: with one source per
            // track any packet may start it (the subscriber asks for a
            // keyframe if it cannot decode).
            isSwitchPoint = true
        }
        track.bitrates.record(
            spatial: layer, temporal: Int(vp8?.temporalLayerID ?? 0), payloadBytes: header.payloadLength, now: now)
        if track.subscriptions.isEmpty { return }
        let source = SourcePacket(header: header, vp8: vp8, isSwitchPoint: isSwitchPoint)

        for s in track.subscriptions {
            guard s.selectedLayer(of: track, now: now) == layer else {
                counters.dropped.otherLayer &+= 1
                continue
            }
            forward(packet, header: header, source: source, vp8: vp8, to: s, now: now, transmit: transmit)
        }
    }

    /// The track and spatial layer `header`'s packet belongs to, learning
    /// SSRCs from the mid/rid extensions (RFC 9143 section 15, RFC 8852
    /// section 3); nil (counted) when it is not one to forward.
    private func resolveTrack(
        _ header: RTPHeader, packet: UnsafeRawBufferPointer, routes: PublisherRoutes
    )
        -> (IncomingTrack, Int)?
    {
        if let route = routes.bySSRC[header.ssrc] {
            switch route {
            case .media(let t, let layer):
                if t.retransmissionPayloadTypes.contains(header.payloadType) { break }
                return (t, layer)
            case .retransmission:
                break
            }
            counters.dropped.retransmission &+= 1
            return nil
        }
        let bytes = RawSpan(_unsafeBytes: packet)
        guard let midID = routes.midExtensionID, let mid = header.mid(id: midID, in: bytes),
            let track = routes.byMID[mid]
        else {
            counters.dropped.unknownSource &+= 1
            return nil
        }
        // RTX packets carry the mid too, and a repaired rid (RFC 8852
        // section 3.2) naming the layer they repair.
        if track.retransmissionPayloadTypes.contains(header.payloadType) {
            let layer = routes.repairedRIDExtensionID.flatMap { header.rid(id: $0, in: bytes) }.flatMap(track.layerIndex(rid:))
            routes.bySSRC[header.ssrc] = .retransmission(track, layer: layer ?? (track.layers.count == 1 ? 0 : nil))
            counters.dropped.retransmission &+= 1
            return nil
        }
        let layer: Int
        if track.layers.first?.rid != nil {
            guard let ridID = routes.ridExtensionID, let rid = header.rid(id: ridID, in: bytes) else {
                // A simulcast packet without its rid cannot be placed (yet).
                counters.dropped.unknownSource &+= 1
                return nil
            }
            guard let index = track.layerIndex(rid: rid) else {
                counters.dropped.otherLayer &+= 1
                return nil
            }
            layer = index
        } else if track.isSimulcast {
            // An unsignalled SSRC on an SSRC-group simulcast track: which
            // layer it is cannot be told.
            counters.dropped.otherLayer &+= 1
            return nil
        } else {
            layer = 0
        }
        routes.bySSRC[header.ssrc] = .media(track, layer: layer)
        return (track, layer)
    }

    /// Rewrites a copy of `packet` for subscription `s` in a transmit slot,
    /// protects it there and queues it.
    private func forward(
        _ packet: UnsafeRawBufferPointer, header: RTPHeader, source: SourcePacket, vp8: VP8PayloadDescriptor?,
        to s: Subscription, now: Instant, transmit: TransmitQueue
    ) {
        guard !s.isPaused else { return counters.dropped.paused &+= 1 }
        guard let id = s.transportID, let transport = transports.transport(id), transport.state == .connected,
            let destination = transport.selectedAddress
        else { return counters.dropped.subscriberNotConnected &+= 1 }
        let rewrite: RTPRewrite
        switch s.rewriter.rewrite(source, arrival: now) {
        case .drop(.notCurrentSource) where s.rewriter.currentSource != source.ssrc:
            // The subscription cannot start (or follow a new source) before
            // a keyframe: a new subscriber, or one whose transport connected
            // after the publisher's last keyframe, would otherwise wait for
            // the next periodic one, or forever. Ask the publisher (throttled
            // per track).
            counters.dropped.count(.notCurrentSource)
            requestKeyframe(.pli, subscriber: s.key.subscriber, outgoingSSRC: s.outgoingSSRC, now: now, transmit: transmit)
            return
        case .drop(let reason): return counters.dropped.count(reason)
        case .forward(let r): rewrite = r
        }
        let length = packet.count
        let payloadType = s.payloadType
        // The publisher's header extensions use the ids it negotiated, which
        // mean other things (or nothing) to this subscriber: a receiver that
        // reads an audio-level byte as abs-send-time fails (aiortc drops the
        // whole transport). They are replaced by ours, with the ids of our
        // offer: the transport-wide sequence number the subscriber's
        // transport-cc feedback reports on, and abs-send-time.
        let link = links[id]
        let transportSequence = link?.nextTransportSequenceNumber()
        var egress = EgressHeaderExtensions()
        if let seq = transportSequence, let ext = egressExtensionIDs.transportWideSequenceNumber {
            egress.transportSequenceNumber = (ext, seq)
        }
        if let ext = egressExtensionIDs.absoluteSendTime {
            egress.absoluteSendTime = (ext, AbsoluteSendTime(nanoseconds: UInt64(max(now.nanoseconds, 0))).rawValue)
        }
        var sent = 0
        transmit.send(to: destination) { slot in
            guard length + SRTPSession.rtpTrailerRoom + egress.blockLength <= slot.count else { return 0 }
            slot.copyMemory(from: packet)
            let bytes = MutableBytes(UnsafeMutableRawBufferPointer(rebasing: slot[0..<length]))
            guard rewrite.apply(to: bytes, header: header, vp8: vp8),
                RTPHeaderRewriter.setPayloadType(payloadType, in: bytes),
                let outLength = egress.write(into: slot, length: length, header: header)
            else { return 0 }
            guard let result = transport.protectRTP(slot, length: outLength), result.to == destination
            else { return 0 }
            sent = result.length
            return result.length
        }
        guard sent > 0 else { return counters.dropped.sendFailed &+= 1 }
        if let link, let number = transportSequence { link.sent(number, size: sent, at: now, kind: .media) }
        s.sendStatistics.record(timestamp: rewrite.timestamp, payloadOctets: header.payloadLength, sentAt: now)
        counters.forwarded &+= 1
        counters.rtpPacketsOut &+= 1
        counters.rtpBytesOut &+= UInt64(sent)
    }
}
