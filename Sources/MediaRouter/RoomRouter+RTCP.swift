import Codecs
import Forwarding
import LossRecovery
import PeerSession
import RTCP
import RTP
import RTPStreams
import RoomProtocol
import Rooms
import Wire

// RTCP is control traffic: building compounds allocates (a few arrays per
// compound, at most a few per second per transport).

extension RoomRouter {
    /// Sequence numbers of one NACK packet looked up at most (RFC 4585
    /// section 6.2.1 sets no limit; a 1,200-byte NACK can name about 5,000,
    /// which cost 8x a forwarded packet to walk). A browser's NACK names a
    /// few lost packets; 512 is over a second of a 4 Mbit/s stream. The
    /// rest count as `retransmissionsLimited`.
    static let maximumNACKedPerPacket = 512
    /// FIR entries of one packet acted on (RFC 5104 section 4.3.1.2: one
    /// per media sender addressed); the rest are ignored.
    static let maximumFIREntriesPerPacket = 64

    /// One decrypted RTCP compound from transport `id`.
    func handleRTCP(
        from id: TransportID, length: Int, in buffer: UnsafeMutableRawBufferPointer, now: Instant, output: any DatagramOutput
    ) {
        counters.rtcpPacketsIn &+= 1
        guard length <= buffer.count else { return }
        guard let key = transportKeys[id] else {
            if let channel = nodeRelayChannel(of: id) {
                handleNodeRelayRTCP(
                    UnsafeRawBufferPointer(rebasing: buffer[0..<length]), on: channel, now: now, output: output)
            }
            return
        }
        // Read in place, validated whole before any packet acts: no arrays
        // per compound (RTCPCompoundView).
        let packetBytes = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        do {
            try RTCPCompoundView.forEachPacket(packetBytes) { packet in
                handleRTCPPacket(packet, in: packetBytes, from: id, key: key, now: now, output: output)
            }
        } catch {
            return counters.dropped.malformedRTCP &+= 1
        }
    }

    private func handleRTCPPacket(
        _ packet: RTCPPacketView, in bytes: UnsafeRawBufferPointer, from id: TransportID, key: TransportKey,
        now: Instant, output: any DatagramOutput
    ) {
        let role = key.role
        switch packet {
        case .senderReport(let ssrc, let senderInfo, _) where role == .publisher:
            // RFC 3550 section 6.4.1: remember when the SR arrived, for
            // the LSR/DLSR of our next report block about this source.
            // The layer's NTP/RTP pair re-bases timestamps when a
            // subscriber switches layers.
            guard case .media(let track, let layer)? = routesByTransport[id]?.bySSRC[ssrc],
                track.layers[layer].stream?.ssrc == ssrc
            else { return }
            track.layers[layer].stream?.senderReport(senderInfo, arrival: now)
            track.layers[layer].senderReport = (senderInfo.ntpTimestamp, senderInfo.rtpTimestamp)
            for s in track.subscriptions {
                s.simulcast?.senderReport(
                    spatialLayer: layer, ssrc: ssrc, ntp: senderInfo.ntpTimestamp, rtpTimestamp: senderInfo.rtpTimestamp)
            }
            relaySenderReport(of: track, layer: layer, ntp: senderInfo.ntpTimestamp, rtpTimestamp: senderInfo.rtpTimestamp)
        case .transportCCFeedback(let feedback, let range) where role == .subscriber:
            // Walked in place over the packet's bytes (issue #12).
            let span = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: bytes[range]))
            if links[id]?.transportFeedback(feedback, packet: span, now: now) == false {
                counters.dropped.transportFeedbackLimited &+= 1
            }
        case .receiverEstimatedMaximumBitrate(let remb) where role == .subscriber:
            links[id]?.receiverEstimatedMaximumBitrate(remb.bitrate, now: now)
        case .receiverReport(_, let reports) where role == .subscriber:
            // Loss on the streams we send this subscriber (the RR
            // fallback of the estimate when there is no transport-cc).
            for block in reports where outgoing[OutgoingKey(transport: id, ssrc: block.ssrc)] != nil {
                links[id]?.receiverReportLoss(fractionLost: block.fractionLost, now: now)
            }
        case .transportLayerNACK(_, let mediaSSRC, let pairs) where role == .subscriber:
            counters.nacksReceived &+= 1
            retransmit(mediaSSRC: mediaSSRC, pairs: pairs, transport: id, now: now, output: output)
        case .pictureLossIndication(let pli) where role == .subscriber:
            requestKeyframe(.pli, transport: id, outgoingSSRC: pli.mediaSSRC, now: now, output: output)
        case .fullIntraRequest(_, _, let entries) where role == .subscriber:
            // RFC 5104 section 4.3.1.2: the FCI entries name the media
            // senders; the header's media SSRC is 0.
            // One entry per media sender; more than a compound's worth
            // is an attack (each costs a lookup and a throttle check).
            for entry in entries.prefix(Self.maximumFIREntriesPerPacket) {
                requestKeyframe(.fir, transport: id, outgoingSSRC: entry.ssrc, now: now, output: output)
            }
        default:
            return
        }
    }

    /// A subscriber asked for a keyframe of the stream it receives as
    /// `outgoingSSRC` (or its subscription waits for one to start): ask the
    /// publisher, at most once per throttle interval per track, naming the
    /// publisher's own SSRC.
    func requestKeyframe(
        _ kind: KeyframeRequestKind, transport id: TransportID, outgoingSSRC: SSRC, now: Instant,
        output: any DatagramOutput
    ) {
        guard let s = outgoing[OutgoingKey(transport: id, ssrc: outgoingSSRC)], let track = s.track else { return }
        // The layer the subscriber decodes now, else the one it waits for.
        let layer =
            s.currentSource.flatMap(track.layerIndex(ssrc:)) ?? s.simulcast?.pendingSpatialLayer ?? s.simulcast?.target?.spatial
            ?? 0
        requestKeyframe(kind, of: track, layer: layer, now: now, output: output)
    }

    /// Asks the publisher of `track` for a keyframe of spatial layer
    /// `layer`, at most once per throttle interval per layer, naming the
    /// layer's SSRC (RFC 4585 section 6.3.1; RFC 5104 section 4.3.1).
    func requestKeyframe(
        _ kind: KeyframeRequestKind, of track: IncomingTrack, layer: Int, now: Instant, output: any DatagramOutput
    ) {
        if let source = track.relaySource { return requestRelayedKeyframe(kind, of: track, layer: layer, from: source, now: now) }
        guard track.layers.indices.contains(layer), let media = track.layers[layer].ssrc,
            let publisherTransport = transportID(of: track.publisher, role: .publisher)
        else { return }
        track.layers[layer].keyframeRequests.mediaSSRC = media
        let request: KeyframeRequest
        switch track.layers[layer].keyframeRequests.request(kind, now: now) {
        case .suppress: return counters.keyframeRequestsSuppressed &+= 1
        case .send(let r): request = r
        }
        let packet: RTCPPacket
        switch request {
        case .pli(let p):
            packet = .pictureLossIndication(p)
            counters.plisForwarded &+= 1
        case .fir(let f):
            packet = .fullIntraRequest(f)
            counters.firsForwarded &+= 1
        }
        // Reduced-size RTCP (RFC 5506): feedback alone, no report first.
        // Browsers negotiate a=rtcp-rsize; the one-packet compound is also
        // what they send themselves.
        sendFeedback(packet, to: publisherTransport, output: output)
    }

    /// One feedback packet alone in its compound (reduced-size RTCP, RFC
    /// 5506), built in `feedbackWriter`.
    @discardableResult
    func sendFeedback(_ packet: RTCPPacket, to id: TransportID, output: any DatagramOutput) -> Bool {
        feedbackWriter.removeAll()
        packet.serialize(into: &feedbackWriter)
        return feedbackWriter.bytes.withUnsafeBytes { sendRTCP($0, to: id, output: output) }
    }

    // MARK: Loss recovery

    /// Answers a subscriber's NACK (RFC 4585 section 6.2.1) from the
    /// track's retransmission buffer, through the subscription's history of
    /// what each outgoing sequence number was: the same rewrite again, on
    /// the RTX stream where negotiated (RFC 4588). A rate limit per
    /// subscriber transport and a once-per-RTT rule per packet keep a NACK
    /// storm from multiplying traffic.
    ///
    /// Only on RTX: a copy re-sent on the media SSRC would carry the number
    /// it first went out with but new header bytes (transport-wide number,
    /// abs-send-time), a second packet under one SRTP index, which AES-GCM
    /// forbids (RFC 7714 section 8.1) and the outbound session refuses. A
    /// subscription without RTX (audio; a subscriber or WHEP viewer that
    /// did not negotiate it) gets a keyframe request to the publisher for
    /// video instead (throttled per layer), and nothing for audio (Opus
    /// conceals a lost frame). docs/TRANSPORT.md, "One index, one packet".
    private func retransmit(
        mediaSSRC: SSRC, pairs: NACKPairs, transport id: TransportID, now: Instant, output: any DatagramOutput
    ) {
        guard let s = outgoing[OutgoingKey(transport: id, ssrc: mediaSSRC)], let track = s.track,
            let link = links[id]
        else { return }
        guard s.rtxSSRC != nil, s.rtxPayloadType != nil, let history = s.history else {
            counters.nacksWithoutRTX &+= 1
            if track.isVideo {
                requestKeyframe(.pli, transport: id, outgoingSSRC: mediaSSRC, now: now, output: output)
            }
            return
        }
        let video = track.isVideo
        var budget = Self.maximumNACKedPerPacket
        // A relayed track: what its own history lacks goes upstream, one
        // generic NACK entry per 17 packets of a layer (RFC 4585 section
        // 6.2.1), sent when the walk ends.
        var upstream = RelayNACKBatch()
        defer { if let source = track.relaySource { flushRelayNACK(&upstream, of: track, from: source) } }
        for pair in pairs {
            guard budget > 0 else {
                counters.retransmissionsLimited &+= UInt64(1 + pair.lostPackets.nonzeroBitCount)
                continue
            }
            // The PID and its bitmask of the 16 following (RFC 4585 section
            // 6.2.1), walked without building an array.
            for bit in -1..<16 where bit < 0 || pair.lostPackets & (1 << UInt16(bit)) != 0 {
                let n = pair.packetID &+ UInt16(bit + 1)
                guard budget > 0 else {
                    counters.retransmissionsLimited &+= 1
                    continue
                }
                budget -= 1
                guard let entry = history.lookup(outgoingSequenceNumber: n) else {
                    if let source = track.relaySource, let (ssrc, number) = Self.unforwardedSource(of: n, in: history),
                        let layer = track.layerIndex(ssrc: ssrc)
                    {
                        nackUpstream(&upstream, layer: layer, sequenceNumber: number, of: track, from: source, now: now)
                    } else {
                        counters.retransmissionsUnavailable &+= 1
                    }
                    continue
                }
                let sent: Bool? = track.retransmissions.withPacket(
                    ssrc: entry.sourceSSRC, sequenceNumber: entry.sourceSequenceNumber, now: now
                ) { packet in
                    guard
                        link.limiter.shouldRetransmit(
                            ssrc: s.outgoingSSRC, sequenceNumber: n, bytes: packet.count, now: now,
                            roundTripTime: link.estimator.roundTripTime)
                    else {
                        counters.retransmissionsLimited &+= 1
                        return false
                    }
                    guard let header = try? RTPHeader(parsing: RawSpan(_unsafeBytes: packet)) else { return false }
                    var vp8: VP8PayloadDescriptor?
                    if video, header.payloadLength > 0 {
                        vp8 = try? VP8PayloadDescriptor(
                            parsing: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: packet[header.payloadRange])))
                    }
                    return send(
                        packet, header: header, vp8: track.formats[header.payloadType]?.codec == .video(.vp8) ? vp8 : nil,
                        rewrite: entry.rewrite, to: s, retransmission: true,
                        captureTime: captureTime(of: packet, header: header, track: track), now: now, output: output)
                }
                switch sent {
                case true?: counters.retransmissionsSent &+= 1
                case false?: break
                case nil:
                    if let source = track.relaySource, let layer = track.layerIndex(ssrc: entry.sourceSSRC) {
                        nackUpstream(
                            &upstream, layer: layer, sequenceNumber: entry.sourceSequenceNumber, of: track, from: source, now: now
                        )
                    } else {
                        counters.retransmissionsUnavailable &+= 1
                    }
                }
            }
        }
    }

    /// NACKs to publishers for what their layers lost (retries bounded by
    /// `NACKGenerator`), and a keyframe request where a gap is beyond
    /// repair.
    func sendPublisherNACKs(now: Instant, output: any DatagramOutput) {
        nextNACKRound = nil
        defer {
            // The next round: the earliest deadline left.
            for track in tracks.values where track.isVideo {
                for layer in track.layers {
                    if let due = layer.stream?.nextRepairDeadline, nextNACKRound.map({ due < $0 }) ?? true {
                        nextNACKRound = due
                    }
                }
            }
        }
        for track in tracks.values where track.isVideo {
            guard let publisherTransport = transportID(of: track.publisher, role: .publisher) else { continue }
            for layer in track.layers.indices {
                guard let ssrc = track.layers[layer].ssrc, let due = track.layers[layer].stream?.nextRepairDeadline,
                    due <= now
                else { continue }
                let keyframeNeeded =
                    track.layers[layer].stream?.pollRepairs(now: now, roundTripTime: nil, into: &nackNumbers) ?? false
                if !nackNumbers.isEmpty {
                    let nack = TransportLayerNACK(
                        senderSSRC: configuration.reporterSSRC, mediaSSRC: ssrc, lostSequenceNumbers: nackNumbers)
                    if sendFeedback(.transportLayerNACK(nack), to: publisherTransport, output: output) {
                        counters.nacksSent &+= 1
                    }
                }
                if keyframeNeeded { requestKeyframe(.pli, of: track, layer: layer, now: now, output: output) }
            }
        }
    }

    // MARK: Reports

    /// One report round: an RR to each publisher transport with a block per
    /// incoming track it has received, and to each subscriber transport
    /// an SR per forwarded stream that has sent (RFC 3550 section 6.4).
    /// `ReportCompoundBuilder` (shared with roombot) assembles them: each
    /// compound ends with an SDES CNAME (section 6.1), RRs carry at most
    /// 31 blocks, and a round larger than one datagram is split.
    func sendReports(now: Instant, output: any DatagramOutput) {
        let wall = wallClock()
        for (id, routes) in routesByTransport {
            // A track is in `byMID` once per mid it has (one, for tracks a
            // publisher offers; the same object is never twice).
            for track in routes.byMID.values {
                for layer in track.layers.indices {
                    if let block = track.layers[layer].stream?.makeReportBlock(now: now) {
                        reportBuilder.addReportBlock(block)
                    }
                }
            }
            sendReports(to: id, output: output)
        }
        // Each subscriber link's streams, gathered in the link's kept list
        // (no dictionary of arrays per round).
        for s in subscriptions.values {
            guard let id = s.transportID, let link = links[id] else { continue }
            link.roundSubscriptions.append(s)
        }
        for (id, link) in links where !link.roundSubscriptions.isEmpty {
            for s in link.roundSubscriptions {
                guard let info = s.sendStatistics.makeSenderInfo(now: now, wallClock: wall) else { continue }
                reportBuilder.addSenderReport(ssrc: s.outgoingSSRC, senderInfo: info)
            }
            link.roundSubscriptions.removeAll(keepingCapacity: true)
            sendReports(to: id, output: output)
        }
    }

    /// Sends the compounds of the round in `reports` to transport `id`.
    private func sendReports(to id: TransportID, output: any DatagramOutput) {
        // A kept buffer: a temporary allocation of the compound's size
        // (over 1 KiB) would come from the heap on every report.
        _ = reportBuilder.write(into: reportBuffer) { compound in
            guard sendRTCP(compound.bytes, to: id, output: output) else { return }
            counters.receiverReportsSent &+= UInt64(compound.receiverReports)
            counters.senderReportsSent &+= UInt64(compound.senderReports)
        }
    }

    @discardableResult
    func sendRTCP(_ bytes: [UInt8], to id: TransportID, output: any DatagramOutput) -> Bool {
        bytes.withUnsafeBytes { sendRTCP($0, to: id, output: output) }
    }

    @discardableResult
    func sendRTCP(_ bytes: UnsafeRawBufferPointer, to id: TransportID, output: any DatagramOutput) -> Bool {
        guard transports.state(of: id) == .connected else { return false }
        let sent = transports.sendRTP(bytes, to: id, rtcp: true, output: output)
        if sent { counters.rtcpPacketsOut &+= 1 }
        return sent
    }
}
