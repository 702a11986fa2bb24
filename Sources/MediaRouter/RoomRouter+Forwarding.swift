import BandwidthEstimation
import Codecs
import Forwarding
import LossRecovery
import PeerSession
import RTP
import RTPStreams
import SRTP
import Wire

// The per-packet path. Nothing here allocates: lookups in dictionaries
// built by commands, value types on the stack, and a non-escaping closure
// that writes straight into the transmit slot.

extension RoomRouter {
    /// One decrypted RTP packet from transport `id`, in `buffer[0..<length]`.
    /// Every subscriber's copy is rewritten in its own transmit slot; the
    /// buffer itself is changed only to restore an RTX packet to the
    /// original it repairs.
    func handleRTP(
        from id: TransportID, length: Int, in buffer: UnsafeMutableRawBufferPointer, now: Instant, output: any DatagramOutput
    ) {
        counters.rtpPacketsIn &+= 1
        counters.rtpBytesIn &+= UInt64(length)
        guard length <= buffer.count else { return counters.dropped.malformed &+= 1 }
        var header: RTPHeader
        do { header = try RTPHeader(parsing: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: buffer[0..<length]))) } catch
        {
            return counters.dropped.malformed &+= 1
        }
        guard let routes = routesByTransport[id] else {
            if let channel = nodeRelayChannel(of: id) {
                return handleNodeRelayRTP(
                    UnsafeRawBufferPointer(rebasing: buffer[0..<length]), on: channel, now: now, output: output)
            }
            return counters.dropped.unknownSource &+= 1
        }
        // Every packet counts for transport-cc feedback, RTX and padding
        // probes included (the publisher's probing depends on them).
        routes.arrivals.record(
            header, packet: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: buffer[0..<length])), arrival: now)
        guard let route = resolveTrack(header, packet: UnsafeRawBufferPointer(rebasing: buffer[0..<length]), routes: routes)
        else { return }
        var packetLength = length
        let track: IncomingTrack
        let layer: Int
        var isRetransmission = false
        switch route {
        case .media(let t, let l):
            (track, layer) = (t, l)
        case .retransmission(let t, let l):
            // RFC 4588 section 4: an answer to our NACK. Restored in place to
            // the packet it repairs, it continues as that packet (late).
            guard let l, let ssrc = t.layers[l].ssrc, let original = t.repairedPayloadTypes[header.payloadType],
                let restored = RTXPacket.restore(
                    in: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length]), length: length, originalSSRC: ssrc,
                    originalPayloadType: original)
            else { return counters.dropped.retransmission &+= 1 }
            (track, layer) = (t, l)
            packetLength = restored.length
            header = restored.header
            isRetransmission = true
            counters.retransmissionsReceived &+= 1
        }
        handleMedia(
            UnsafeRawBufferPointer(rebasing: buffer[0..<packetLength]), header: header, track: track, layer: layer,
            isRetransmission: isRetransmission, now: now, output: output)
    }

    /// A media packet of spatial layer `layer` of `track`.
    func handleMedia(
        _ packet: UnsafeRawBufferPointer, header: RTPHeader, track: IncomingTrack, layer: Int, isRetransmission: Bool,
        now: Instant, output: any DatagramOutput
    ) {
        guard let format = track.formats[header.payloadType] else {
            return counters.dropped.unknownPayloadType &+= 1
        }
        if track.layers[layer].stream?.ssrc != header.ssrc {
            // A relayed track's losses upstream are the source worker's to
            // NACK (it has the publisher's transport); its far subscribers'
            // NACKs go there through the relay (`retransmit`).
            track.layers[layer].stream = ReceivedRTPStream(
                ssrc: header.ssrc, clockRate: format.clockRate, repairsLoss: track.relaySource == nil)
            track.layers[layer].keyframeRequests.mediaSSRC = header.ssrc
            track.layers[layer].ssrc = header.ssrc
        }
        track.layers[layer].stream?.received(header, arrival: now, isRetransmission: isRetransmission)
        // A gap is NACKed when its reorder wait ends, not at the next 50 ms
        // round: every millisecond counts twice (there and back).
        if let due = track.layers[layer].stream?.nextRepairDeadline, nextNACKRound.map({ due < $0 }) ?? true {
            nextNACKRound = due
        }
        // Muted: received (reports and NACKs go on) but passed to nobody,
        // and not live for layer choice or active speakers.
        if track.isMuted { return counters.filtered.muted &+= 1 }
        if !isRetransmission, header.payloadLength > 0 { track.layers[layer].lastArrival = now }

        // What a decoder needs to know of the payload: the keyframe start
        // (the only place a subscriber can begin or switch layers) and,
        // for VP8, the picture ID and TL0PICIDX fields the rewriter keeps
        // continuous and the temporal layer.
        var vp8: VP8PayloadDescriptor?
        let isSwitchPoint: Bool
        let payload = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: packet[header.payloadRange]))
        switch format.codec {
        case .opus:
            isSwitchPoint = true
            if !isRetransmission, let levelID = track.description.headerExtensions.audioLevel,
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
            // A subscriber can start only at an IDR whose SPS and PPS it has.
            do {
                let descriptor = try H264PayloadDescriptor(parsing: payload)
                isSwitchPoint = track.layers[layer].h264.isDecoderRefresh(descriptor, timestamp: header.timestamp)
                // The layer's size, from the SPS sent with each IDR: what
                // a `maxWidth` preference is measured against.
                if descriptor.containsSPS, let unit = H264PayloadDescriptor.sequenceParameterSetRange(in: payload),
                    let size = try? H264PictureSize(parsing: payload, unit: unit)
                {
                    track.layers[layer].width = size.width
                    track.layers[layer].height = size.height
                }
            } catch {
                return counters.dropped.malformed &+= 1
            }
        case .video:
            // VP9 and AV1 descriptors are not read yet: with one source per
            // track any packet may start it (the subscriber asks for a
            // keyframe if it cannot decode).
            isSwitchPoint = true
        }
        if !isRetransmission {
            track.bitrates.record(
                spatial: layer, temporal: Int(vp8?.temporalLayerID ?? 0), payloadBytes: header.payloadLength, now: now)
        }
        if header.payloadLength > 0 {
            track.retransmissions.store(packet, ssrc: header.ssrc, sequenceNumber: header.sequenceNumber, arrival: now)
        }
        // Once per far worker, whatever its number of subscribers: it does
        // its own layer choice, rewriting and encryption.
        if !track.relaySinks.isEmpty { relay(packet, of: track, layer: layer, isRetransmission: isRetransmission) }
        if track.subscriptions.isEmpty { return }
        let source = SourcePacket(header: header, vp8: vp8, isSwitchPoint: isSwitchPoint)
        let capture = captureTime(of: packet, header: header, track: track)

        for s in track.subscriptions {
            let decision: ForwardDecision
            if s.forwardsLayers {
                let outcome = s.simulcast?.handle(SimulcastPacket(source: source, spatialLayer: layer), arrival: now)
                if let k = outcome?.keyframeRequest {
                    requestKeyframe(.pli, of: track, layer: k, now: now, output: output)
                }
                if case .fillGap(let rewrite)? = outcome?.decision {
                    fillGap(rewrite, for: s, now: now, output: output)
                    continue
                }
                if let reason = outcome?.selectorDrop {
                    counters.count(reason)
                    continue
                }
                decision = outcome?.decision ?? .drop(.notForwarded)
            } else {
                guard !s.isPaused, !s.isAudioPaused else {
                    counters.filtered.paused &+= 1
                    continue
                }
                decision = s.rewriter?.rewrite(source, arrival: now) ?? .drop(.notForwarded)
            }
            switch decision {
            case .drop(let reason): counters.dropped.count(reason)
            case .fillGap(let rewrite): fillGap(rewrite, for: s, now: now, output: output)
            case .forward(let rewrite):
                guard
                    send(
                        packet, header: header, vp8: vp8, rewrite: rewrite, to: s, captureTime: capture, now: now,
                        output: output)
                else { continue }
                s.history?.record(
                    rewrite, sourceSSRC: header.ssrc, sourceSequenceNumber: header.sequenceNumber, now: now)
                s.sendStatistics.record(timestamp: rewrite.timestamp, payloadOctets: header.payloadLength, sentAt: now)
                counters.forwarded &+= 1
            }
        }
    }

    /// A route for `header`'s packet, learning SSRCs from the mid/rid
    /// extensions (RFC 9143 section 15, RFC 8852 section 3); nil (counted)
    /// when it is not one to forward.
    private func resolveTrack(
        _ header: RTPHeader, packet: UnsafeRawBufferPointer, routes: PublisherRoutes
    ) -> PublisherRoutes.Route? {
        if let route = routes.bySSRC[header.ssrc] {
            if case .media(let t, _) = route, t.retransmissionPayloadTypes.contains(header.payloadType) {
                // An RTX payload type on a media SSRC: not RFC 4588.
                counters.dropped.retransmission &+= 1
                return nil
            }
            return route
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
            let route = PublisherRoutes.Route.retransmission(track, layer: layer ?? (track.layers.count == 1 ? 0 : nil))
            guard learn(header.ssrc, route, for: track, in: routes) else { return nil }
            return route
        }
        let layer: Int
        if track.layers.first?.rid != nil {
            guard let ridID = routes.ridExtensionID, let rid = header.rid(id: ridID, in: bytes) else {
                // A simulcast packet without its rid cannot be placed (yet).
                counters.dropped.unknownSource &+= 1
                return nil
            }
            guard let index = track.layerIndex(rid: rid) else {
                counters.dropped.unknownLayer &+= 1
                return nil
            }
            layer = index
        } else if track.isSimulcast {
            // An unsignalled SSRC on an SSRC-group simulcast track: which
            // layer it is cannot be told.
            counters.dropped.unknownLayer &+= 1
            return nil
        } else {
            layer = 0
        }
        let route = PublisherRoutes.Route.media(track, layer: layer)
        guard learn(header.ssrc, route, for: track, in: routes) else { return nil }
        return route
    }

    /// Remembers a learned SSRC while `track` has room for it (counted
    /// `unsignalledSSRC` when not).
    private func learn(
        _ ssrc: SSRC, _ route: PublisherRoutes.Route, for track: IncomingTrack, in routes: PublisherRoutes
    )
        -> Bool
    {
        guard track.learnedSSRCs < track.learnedSSRCLimit else {
            counters.dropped.unsignalledSSRC &+= 1
            return false
        }
        track.learnedSSRCs += 1
        routes.bySSRC[ssrc] = route
        return true
    }

    /// The publisher's abs-capture-time of `packet`, read once for all its
    /// copies.
    func captureTime(
        of packet: UnsafeRawBufferPointer, header: RTPHeader, track: IncomingTrack
    ) -> (
        timestamp: UInt64, clockOffset: Int64?
    )? {
        guard let id = track.description.headerExtensions.absoluteCaptureTime,
            let range = header.extensionValueRange(id: id, in: RawSpan(_unsafeBytes: packet))
        else { return nil }
        return EgressHeaderExtensions.absoluteCaptureTime(in: RawSpan(_unsafeBytes: packet), range: range)
    }

    /// Sends subscription `s` a padding-only packet (RFC 3550 section 5.1,
    /// P bit) with the sequence number and timestamp of `rewrite`: a
    /// number kept free for a packet that was late and then not forwarded.
    func fillGap(_ rewrite: RTPRewrite, for s: Subscription, now: Instant, output: any DatagramOutput) {
        guard let sink = s.sink else { return }
        let payloadType = s.payloadType
        let sent = transmitToSubscriber(
            on: sink, kind: .media, extraRoom: RTPHeader.fixedHeaderLength + 4, now: now, output: output
        ) { slot, egress in
            guard
                let length = RTXPacket.makePadding(
                    in: slot, rtxSSRC: rewrite.ssrc, sequenceNumber: rewrite.sequenceNumber, payloadType: payloadType,
                    timestamp: rewrite.timestamp, paddingBytes: 4),
                let header = try? RTPHeader(parsing: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: slot[0..<length])))
            else { return nil }
            return egress.write(into: slot, length: length, header: header)
        }
        guard let sent else { return }
        guard sent > 0 else { return counters.dropped.sendFailed &+= 1 }
        counters.gapsFilled &+= 1
        counters.rtpPacketsOut &+= 1
        counters.rtpBytesOut &+= UInt64(sent)
    }

    /// Rewrites a copy of `packet` for subscription `s` in a transmit slot
    /// (header values, payload type; on the RTX stream when
    /// `retransmission` and RTX was negotiated) and sends it with
    /// `transmitToSubscriber`. Returns whether it went out.
    ///
    /// `captureTime` is the packet's abs-capture-time, passed through
    /// (receivers measure end-to-end delay with it).
    func send(
        _ packet: UnsafeRawBufferPointer, header: RTPHeader, vp8: VP8PayloadDescriptor?, rewrite: RTPRewrite,
        to s: Subscription, retransmission: Bool = false, captureTime: (timestamp: UInt64, clockOffset: Int64?)?,
        now: Instant, output: any DatagramOutput
    ) -> Bool {
        guard let sink = s.sink else {
            counters.dropped.subscriberNotConnected &+= 1
            return false
        }
        let payloadType = s.payloadType
        let rtx: (ssrc: SSRC, sequenceNumber: UInt16, payloadType: PayloadType)? =
            retransmission
            ? s.rtxSSRC.flatMap { ssrc in s.rtxPayloadType.map { (ssrc, s.rtxSequenceNumber, $0) } } : nil
        let sent = transmitToSubscriber(
            on: sink, kind: retransmission ? .retransmission : .media, captureTime: captureTime,
            extraRoom: packet.count + RTXPacket.originalSequenceNumberLength, now: now, output: output,
            write: { slot, egress in
                // One copy: header and payload straight to their places
                // around our extension block, then the rewrite in the slot.
                guard let length = egress.copy(packet, header: header, into: slot) else { return nil }
                let bytes = MutableBytes(UnsafeMutableRawBufferPointer(rebasing: slot[0..<length]))
                // The VP8 fields sit at the payload's new offset; the other
                // rewrites are at fixed offsets of the fixed header.
                var placed = header
                if vp8 != nil {
                    guard
                        let h = try? RTPHeader(
                            parsing: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: slot[0..<length])))
                    else { return nil }
                    placed = h
                }
                guard rewrite.apply(to: bytes, header: placed, vp8: vp8),
                    RTPHeaderRewriter.setPayloadType(payloadType, in: bytes)
                else { return nil }
                return length
            },
            wrap: { slot, length in
                guard let rtx else { return length }
                return RTXPacket.wrap(
                    in: slot, length: length, rtxSSRC: rtx.ssrc, rtxSequenceNumber: rtx.sequenceNumber,
                    rtxPayloadType: rtx.payloadType)
            })
        guard let sent else {
            counters.dropped.subscriberNotConnected &+= 1
            return false
        }
        // The RTX number moves on even when the send failed after protect:
        // an index protected once is never offered to libsrtp again (it
        // would refuse it, and every later retransmission with it).
        if rtx != nil { s.rtxSequenceNumber &+= 1 }
        guard sent > 0 else {
            counters.dropped.sendFailed &+= 1
            return false
        }
        counters.rtpPacketsOut &+= 1
        counters.rtpBytesOut &+= UInt64(sent)
        return true
    }

    /// The one way an RTP packet leaves for a subscriber transport: `write`
    /// puts the packet in the transmit slot with our header extensions in
    /// place of the publisher's (`EgressHeaderExtensions`: `copy` for a
    /// forwarded packet, `write` for one built in the slot) and returns
    /// its length (nil drops it), `wrap` may transform it (RTX), and it is protected
    /// and queued and recorded in the link's sent history under its
    /// transport-wide number. `extraRoom` is what the slot needs beyond
    /// the extensions and the SRTP trailer. Returns the bytes sent (0:
    /// nothing went out), nil when the transport is not connected.
    ///
    /// The publisher's extensions use the ids it negotiated, which mean
    /// other things (or nothing) to this subscriber: a receiver that reads
    /// an audio-level byte as abs-send-time fails (aiortc drops the whole
    /// transport). Ours use the ids the sink negotiated (our offer's, or a
    /// WHEP viewer's own): the transport-wide
    /// sequence number the subscriber's transport-cc feedback reports on,
    /// abs-send-time, and the publisher's abs-capture-time.
    func transmitToSubscriber(
        on sink: SubscriberSink, kind: SentPacketKind, captureTime: (timestamp: UInt64, clockOffset: Int64?)? = nil,
        extraRoom: Int, now: Instant, output: any DatagramOutput,
        write: (UnsafeMutableRawBufferPointer, EgressHeaderExtensions) -> Int?,
        wrap: (UnsafeMutableRawBufferPointer, Int) -> Int? = { _, length in length }
    ) -> Int? {
        let transport = sink.transport
        guard transport.state == .connected, let destination = transport.selectedAddress else { return nil }
        let link = sink.link
        let transportSequence = link.nextTransportSequenceNumber()
        var egress = EgressHeaderExtensions()
        let ids = sink.extensionIDs
        if let ext = ids.transportWideSequenceNumber {
            egress.transportSequenceNumber = (ext, transportSequence)
        }
        if kind != .probe, let ext = ids.absoluteSendTime {
            egress.absoluteSendTime = (ext, AbsoluteSendTime(nanoseconds: UInt64(max(now.nanoseconds, 0))).rawValue)
        }
        if let ext = ids.absoluteCaptureTime, let capture = captureTime {
            egress.absoluteCaptureTime = (ext, capture.timestamp, capture.clockOffset)
        }
        var sent = 0
        output.send(to: destination, from: transport.selectedLocalAddress) { slot in
            guard extraRoom + egress.blockLength + SRTPSession.rtpTrailerRoom <= slot.count,
                let withExtensions = write(slot, egress), let out = wrap(slot, withExtensions)
            else { return 0 }
            let refused = transport.counters.repeatedIndexRefused
            guard let result = transport.protectRTP(slot, length: out), result.to == destination else {
                if transport.counters.repeatedIndexRefused != refused { counters.dropped.repeatedSRTPIndex &+= 1 }
                return 0
            }
            sent = result.length
            return sent
        }
        if sent > 0 { link.sent(transportSequence, size: sent, at: now, kind: kind) }
        return sent
    }
}
