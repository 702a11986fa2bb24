import BotMedia
import DTLS
import Forwarding
import Foundation
import HTTPClient
import ICE
import Negotiation
import NetIO
import PeerSession
import RTCP
import RTP
import RTPStreams
import RoomProtocol
import SDP
import Signaling
import Wire

/// One simulated participant: its room WebSocket, a publisher transport
/// (publishers), a subscriber transport (subscribers), or both
/// (participants: one WebSocket, two transports, as the web client), and
/// its record.
///
/// Room protocol (docs/PROTOCOL.md): `join` with a locally minted token;
/// publishers send `publish` with a `ClientOfferBuilder` offer and apply
/// the `publish-answer`; subscribers answer each `subscriber-offer` with a
/// `ClientAnswerBuilder` answer, echoing `version`.
final class Bot {
    /// The bot's index in its loop's `bots` (set by `BotLoop`).
    var loopSlot = -1
    /// The epoll tag of the bot's current room WebSocket (set by
    /// `BotLoop` when it registers one).
    var signalingTag: UInt64?
    let record: BotRecord
    /// Set again by `BotLoopGroup` to the context of the loop that runs it.
    var context: BotContext
    var signaling: SignalingClient?
    var publisher: BotTransport?
    var subscriber: BotTransport?
    var offerBuilder: ClientOfferBuilder?
    /// `--data-rate`: our "roombot" channel's stream and the next send.
    var dataStream: UInt16?
    var nextDataAt: Instant?
    var pendingOffer: SessionDescription?
    private var publication: ClientPublication?
    var answerBuilder: ClientAnswerBuilder?
    private var mediaSource: BotMediaSource?
    var sinks: [SSRC: BotMediaSink] { record.sinks }
    var announced: [SSRC: AnnouncedTrack] = [:]
    var repairs = RepairStreams()
    /// The numbers of one NACK, kept between rounds.
    private var nackNumbers: [UInt16] = []
    /// The server's own keyframe-request throttle, per received track.
    var keyframeRequests: [SSRC: KeyframeRequestThrottle] = [:]
    /// Video track ids from `track-published` and the subscriber offer's msid.
    var videoTrackIDs: [String] = []
    /// Video tracks whose `--layout` width was sent.
    var layoutSent: Set<String> = []
    var nextSwitchAt: Instant?
    var switchStep = 0
    var random = SystemRandomNumberGenerator()
    private(set) var leaving = false
    private var roundTrip = RoundTripEstimator()
    private var sendStats: [SSRC: SendStatistics] = [:]
    private var nextReport: Instant?
    /// Our SSRC as a receiver, in RRs (RFC 3550 section 6.4.2).
    private(set) lazy var reportSSRC = SSRC(UInt32.random(in: 1...UInt32.max, using: &random))
    /// Our SRs and RRs, assembled as the server assembles its own; the
    /// CNAME is the one our publication's SDP gives (RFC 3550 section
    /// 6.5.1: one per participant).
    private lazy var reports = ReportCompoundBuilder(reporterSSRC: reportSSRC, cname: record.identity)
    static let reportInterval = Duration.seconds(1)

    /// A light subscriber (`--light`): counts received RTP from its
    /// header (`Bot+Light.swift`), no sinks, no NACKs.
    var light: Bool { record.light }
    /// Light: per received SSRC, the abs-capture-time id its mid maps to.
    var captureTimeIDs: [SSRC: UInt8] = [:]
    /// transport-cc arrivals on the subscriber transport (`Bot+Feedback.swift`).
    var arrivals: TransportWideArrivals?

    init(record: BotRecord, context: BotContext) {
        self.record = record
        self.context = context
    }

    /// The `--url` this bot uses, resolved.
    var server: BotServer { context.servers[record.serverIndex] }

    /// The WHIP/WHEP request in flight, and the session's Location.
    var http: HTTPExchange?
    var httpPurpose = HTTPPurpose.none
    var sessionLocation: String?
    var retryAt: Instant?
    var playbackBuilder: ClientOfferBuilder?

    enum HTTPPurpose { case none, whip, whep, delete }

    var usesWHIP: Bool { record.role == .publisher && context.options.whip }
    var usesWHEP: Bool { record.role == .subscriber && context.options.whep }

    /// Connection attempts that failed before the server answered, and
    /// when the next one is due (`Bot+Connect.swift`).
    var connectFailures = 0
    var reconnectAt: Instant?
    /// The WebSocket opened at least once: a close after that is a
    /// signalling error, not a failed connect.
    var opened = false
    /// The room WebSocket dropped and is being opened again; the server
    /// announced a drain (`going-away`: no reconnect).
    var reconnection: SignalingReconnection?
    var drainAnnounced = false
    var lastConnectError: String?
    /// The last WHIP/WHEP POST, sent again after a failed connect.
    var lastPost: (path: String, sdp: String, purpose: HTTPPurpose)?

    func start(now: Instant) {
        record.startedAt = now
        record.usesHTTP = usesWHIP || usesWHEP
        if usesWHIP { return startPublishing(now: now) }
        if usesWHEP { return startPlayback(now: now) }
        openSignaling(now: now)
    }

    func openSignaling(now: Instant) {
        do {
            signaling = try SignalingClient(to: server.endpoint, path: server.url.path, random: &random)
            context.registerSignaling(self)
        } catch {
            connectFailed("\(error)", now: now)
        }
    }

    // MARK: Signalling

    func handle(_ events: [SignalingClient.Event], now: Instant) {
        for e in events {
            switch e {
            case .opened:
                opened = true
                record.signalingUp = true
                sendJoin()
            case .text(let t): handleMessage(t, now: now)
            case .closed(let reason, let code):
                record.signalingUp = false
                signalingClosed(reason, code: code, now: now)
            }
        }
    }

    /// A token for this bot's room and identity: publishers may publish,
    /// subscribers subscribe, participants both (docs/TOKENS.md), valid
    /// for a day.
    var token: String {
        let grants = AccessTokenGrants(publish: record.role.publishes, subscribe: record.role.subscribes)
        let nowSeconds = Int64(Date().timeIntervalSince1970)
        let claims = AccessTokenClaims(
            issuer: context.options.key, subject: record.identity, notBefore: nowSeconds - 5,
            expiresAt: nowSeconds + 24 * 3600, room: record.room, grants: grants)
        return AccessToken.mint(claims: claims, secret: context.options.secret)
    }

    private func sendJoin() {
        send(.join(token: token, mode: nil))
    }

    func send(_ message: ClientMessage) {
        // Only a mesh payload holding a non-finite number fails to encode;
        // roombot sends none.
        guard let text = try? message.json() else { return }
        signaling?.send(text: text)
    }

    private func handleMessage(_ text: String, now: Instant) {
        let message: ServerMessage
        do throws(RoomProtocolError) {
            message = try ServerMessage(json: text)
        } catch .unknownType {
            return  // a newer server's message: nothing roombot acts on
        } catch {
            return record.error("bad_server_message", "\(error)")
        }
        switch message {
        case .joined(_, _, _, _, let resumed):
            if reconnection != nil { rejoined(resumed: resumed, now: now) }
            guard record.joinedAt == nil else { return }
            record.joinedAt = now
            if record.role.publishes { startPublishing(now: now) }
        case .publishAnswer(let sdp, _):
            applyPublishAnswer(sdp, now: now)
        case .subscriberOffer(let sdp, let version):
            answerSubscriberOffer(sdp, version: version, now: now)
        case .error(let code, let text):
            record.error("server_" + code.rawValue, text)
        case .goingAway(let reason, _, _):
            // The server drains (docs/PROTOCOL.md): this bot will be cut
            // off, and a reconnect to this URL would be refused (503).
            drainAnnounced = true
            record.error("going_away", reason)
        case .streamState(let track, _, let layer, _):
            record.streamStates += 1
            record.forwardedLayer[track] = layer
        case .publisherLayers(_, let layers):
            record.publisherLayerMessages += 1
            for layer in layers {
                guard let rid = RID(layer.rid) else { continue }
                mediaSource?.setActive(rid: rid, layer.active)
            }
        case .activeSpeakers:
            record.activeSpeakerMessages += 1
        case .trackPublished(_, let track):
            if track.kind == .video, !videoTrackIDs.contains(track.id) { videoTrackIDs.append(track.id) }
        case .participantJoined, .participantLeft, .participantUpdated, .trackUnpublished, .trackMuted, .incomingCall,
            .callRinging,
            .callStarted, .callDeclined, .callEnded, .meshSignal, .pong:
            break
        }
    }

    // MARK: Transports

    /// A client-role transport on its own UDP socket, registered with the
    /// loop, and how our SDP describes it (full ICE, one host candidate);
    /// nil (and a "socket" error) when the socket cannot be opened.
    func openTransport(now: Instant) -> (BotTransport, LocalTransportParameters)? {
        let t: BotTransport
        do {
            t = try BotTransport(
                bindIP: server.bindIP, certificate: context.certificate, now: now, batch: context.receiveBatch)
        } catch {
            record.error("socket")
            return nil
        }
        context.register(t, for: self)
        let local = LocalTransportParameters(
            credentials: t.transport.localCredentials, fingerprint: context.certificate.fingerprint(),
            candidates: [ICECandidate.host(t.local)], isICELite: false)
        return (t, local)
    }

    // MARK: Publishing

    /// A new transport and offer; after a rejoin the same publication
    /// (SSRCs, stream id), so the media source goes on as it was.
    func startPublishing(now: Instant) {
        guard let (transport, local) = openTransport(now: now) else { return }
        publisher = transport
        var builder = ClientOfferBuilder(sessionID: UInt64.random(in: 1...UInt64.max, using: &random), local: local)
        builder.videoCodec = context.options.offeredVideoCodec
        builder.offersDataChannel = context.options.dataRate > 0 && !usesWHIP
        func ssrc() -> SSRC { SSRC(UInt32.random(in: 1...UInt32.max, using: &random)) }
        var layers: [ClientPublication.VideoLayer] = []
        if publication == nil, !context.options.audioOnly {
            let rids: [RID?] = context.options.simulcast ? ["q", "h", "f"] : [nil]
            layers = rids.map { ClientPublication.VideoLayer(rid: $0, ssrc: ssrc(), rtxSSRC: ssrc()) }
        }
        let p =
            publication
            ?? ClientPublication(audioSSRC: ssrc(), videoLayers: layers, streamID: record.identity, cname: record.identity)
        let offer = builder.publishOffer(p)
        offerBuilder = builder
        publication = p
        pendingOffer = offer
        if usesWHIP {
            post(path: "/whip/\(record.room)", sdp: offer.text, purpose: .whip)
        } else {
            send(.publish(sdp: offer.text))
        }
    }

    func applyPublishAnswer(_ sdp: String, now: Instant) {
        guard let builder = offerBuilder, let offer = pendingOffer, let publication, let publisher else { return }
        do {
            let answer = try builder.applyAnswer(try SessionDescription.parse(sdp), to: offer)
            record.publishAnsweredAt = now
            record.tracksPublished = answer.sections.filter { $0.accepted && $0.kind != nil }.count
            let t = answer.transport
            publisher.setRemote(credentials: t.credentials, fingerprints: t.fingerprints, candidates: t.candidates, now: now)
            enableDataChannels(answer, now: now)
            let audio = answer.sections.first { $0.kind == .audio && $0.accepted }
            let video = answer.sections.first { $0.kind == .video && $0.accepted }
            let plan = BotMediaPlan(
                publication: publication, audioPayloadType: ClientOfferBuilder.audioPayloadType,
                videoPayloadType: ClientOfferBuilder.videoPayloadType,
                videoRTXPayloadType: ClientOfferBuilder.videoRTXPayloadType, audioExtensions: audio?.extensions,
                videoExtensions: video?.extensions, videoRIDs: video?.receivedRIDs ?? [], audioMID: audio?.mid,
                videoMID: video?.mid)
            if let source = mediaSource {
                // A rejoin: the source goes on; the new node's subscribers
                // need a keyframe, as from a new publisher.
                for layer in publication.videoLayers { source.requestKeyframe(ssrc: layer.ssrc) }
                return
            }
            mediaSource = context.media.makeSource(
                for: plan, seed: UInt64.random(in: 1...UInt64.max, using: &random), now: now)
            if mediaSource == nil, !(context.media is NoMedia) { record.error("media_source") }
        } catch {
            record.error("publish_answer_refused")
        }
    }

    func announce(_ tracks: [AnnouncedTrack], absCaptureTimeIDs: [MID: UInt8], now: Instant) {
        record.tracksAnnounced = tracks.count
        // A track no longer offered was unpublished: its silence from now
        // on is no stall.
        let still = Set(tracks.compactMap(\.ssrc))
        for (ssrc, stats) in record.tracks where !still.contains(ssrc) && stats.endedAt == nil {
            record.tracks[ssrc]?.endedAt = now
        }
        announced = [:]
        repairs.announce(tracks)
        for track in tracks {
            guard let ssrc = track.ssrc else { continue }
            announced[ssrc] = track
            if track.kind == .video, let id = track.trackID, !videoTrackIDs.contains(id) { videoTrackIDs.append(id) }
            if light {
                captureTimeIDs[ssrc] = absCaptureTimeIDs[track.mid]
            } else if record.sinks[ssrc] == nil,
                let sink = context.media.makeSink(for: track, absCaptureTimeID: absCaptureTimeIDs[track.mid])
            {
                record.sinks[ssrc] = sink
            }
        }
    }

    // MARK: Subscribing

    private func answerSubscriberOffer(_ sdp: String, version: Int, now: Instant) {
        if subscriber == nil {
            guard let (t, local) = openTransport(now: now) else { return }
            subscriber = t
            t.countsHeadersOnly = light
            answerBuilder = ClientAnswerBuilder(sessionID: UInt64.random(in: 1...UInt64.max, using: &random), local: local)
        }
        guard var builder = answerBuilder, let subscriber else { return }
        do {
            let offer = try SessionDescription.parse(sdp)
            let answer = try builder.makeAnswer(to: offer)
            answerBuilder = builder
            send(.subscriberAnswer(sdp: answer.description.text, version: version))
            record.subscriberOffersAnswered += 1
            announce(answer.tracks, absCaptureTimeIDs: absCaptureTimeIDs(in: offer), now: now)
            useTransportFeedback(in: offer)
            let t = answer.transport
            subscriber.setRemote(credentials: t.credentials, fingerprints: t.fingerprints, candidates: t.candidates, now: now)
        } catch {
            record.error("subscriber_offer_refused")
        }
    }

    // MARK: Media

    /// A decrypted datagram from one of our transports.
    func received(
        _ kind: ReceivedDatagram, _ bytes: UnsafeMutableRawBufferPointer, at arrival: Instant, from transport: BotTransport
    ) {
        var raw = UnsafeRawBufferPointer(bytes)
        if case .rtcp = kind { return receivedRTCP(raw, at: arrival, onPublisher: transport === publisher) }
        guard var header = try? RTPHeader(parsing: RawSpan(_unsafeBytes: raw)) else {
            return record.error("bad_rtp")
        }
        // Before RTX is unwrapped: the transport-wide number is the
        // packet's as sent, probes included.
        arrivals?.record(header, packet: RawSpan(_unsafeBytes: raw), arrival: arrival)
        var isRetransmission = false
        switch repairs.restore(bytes, header: header) {
        case .media: break
        case .nothing: return  // a padding-only probe
        case .original(let repaired, let h):
            record.retransmissionsReceived += 1
            isRetransmission = true
            raw = repaired
            header = h
        }
        guard let track = announced[header.ssrc] else { return }  // not yet announced
        // By index, mutated in place in the dictionary: a copy out and back
        // (or `tracks[ssrc] == nil`) would copy the statistics and the NACK
        // generator's storage per packet.
        var index = record.tracks.index(forKey: header.ssrc)
        if index == nil {
            record.tracks[header.ssrc] = TrackStats(track: track, ssrc: header.ssrc, repairsLoss: track.kind == .video)
            index = record.tracks.index(forKey: header.ssrc)
        }
        if let index {
            record.tracks.values[index].stream.received(header, arrival: arrival, isRetransmission: isRetransmission)
            record.tracks.values[index].packet(bytes: raw.count, at: arrival)
        }
        if record.firstMediaAt == nil { record.firstMediaAt = arrival }
        if sinks[header.ssrc]?.received(raw, header: header, track: track, now: arrival) == .keyframeNeeded {
            sendPLI(ssrc: header.ssrc, now: arrival)
        }
        if record.recoveringSince != nil { mediaAfterRejoin(ssrc: header.ssrc, arrival: arrival) }
    }

    /// Sends the NACKs (RFC 4585 section 6.2.1) and keyframe requests the
    /// received streams have due. The subscriber has no round-trip
    /// estimate of its own (the server sends no reports about our SSRCs),
    /// so retries use the generator's default.
    private func sendNACKs(now: Instant) {
        guard let s = subscriber, s.isConnected else { return }
        // By index, so polling a stream mutates it in place (iterating
        // `keys` would keep a second reference to the dictionary's storage).
        var index = record.tracks.startIndex
        while index != record.tracks.endIndex {
            defer { index = record.tracks.index(after: index) }
            guard let due = record.tracks.values[index].stream.nextRepairDeadline, due <= now else { continue }
            let ssrc = record.tracks.keys[index]
            let keyframe = record.tracks.values[index].stream.pollRepairs(
                now: now, roundTripTime: nil, into: &nackNumbers)
            if !nackNumbers.isEmpty {
                record.nacksSent += 1
                record.packetsNacked += nackNumbers.count
                sendRTCP(
                    TransportLayerNACK(senderSSRC: reportSSRC, mediaSSRC: ssrc, lostSequenceNumbers: nackNumbers)
                        .serialized(), on: s)
            }
            // Only the throttle's own state changes: the index stays valid.
            if keyframe { sendPLI(ssrc: ssrc, now: now) }
        }
    }

    /// At most one PLI per track per 300 ms while frames stay undecodable
    /// (RFC 4585 section 6.3.1), throttled as the server throttles its own.
    private func sendPLI(ssrc: SSRC, now: Instant) {
        guard let s = subscriber, s.isConnected else { return }
        var throttle =
            keyframeRequests[ssrc]
            ?? KeyframeRequestThrottle(senderSSRC: reportSSRC, mediaSSRC: ssrc, interval: .milliseconds(300))
        defer { keyframeRequests[ssrc] = throttle }
        guard case .send(.pli(let pli)) = throttle.request(.pli, now: now) else { return }
        record.plisSent += 1
        sendRTCP(pli.serialized(), on: s)
    }

    /// Timers of both transports, then whatever media is due.
    func tick(now: Instant) {
        checkConnectDeadline(now: now)
        if let p = publisher {
            p.tick(now: now)
            if record.publisherConnectedAt == nil, let at = p.connectedAt { record.publisherConnectedAt = at }
            if let f = p.failure, !leaving, !publisherFailureCounted {
                publisherFailureCounted = true
                record.error(f.kind, "publisher transport: \(f.detail)")
            }
            tickData(now: now)
            if p.isConnected, let source = mediaSource {
                context.sendBuffer.withUnsafeMutableBytes { buffer in
                    // Room for the SRTP trailer after the packet.
                    let room = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(buffer.count - 32)])
                    while let n = source.nextPacket(into: room, now: now) {
                        recordSent(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), now: now)
                        p.sendMedia(buffer, length: n)
                    }
                }
            }
        }
        if !leaving {
            sendNACKs(now: now)
            sendTransportFeedback(now: now)
            sendReports(now: now)
            cycleLayers(now: now)
            applyLayout()
        }
        if let at = retryAt, now >= at, !leaving {
            retryAt = nil
            startPlayback(now: now)
        }
        if let s = subscriber {
            s.tick(now: now)
            if record.subscriberConnectedAt == nil, let at = s.connectedAt { record.subscriberConnectedAt = at }
            if let f = s.failure, !leaving, !subscriberFailureCounted {
                subscriberFailureCounted = true
                record.error(f.kind, "subscriber transport: \(f.detail)")
            }
        }
        record.transportUp = record.transportsUp(publisher: publisher?.isConnected, subscriber: subscriber?.isConnected)
        if let at = reconnectAt, now >= at, !leaving {
            reconnectAt = nil
            reconnect(now: now)
        }
    }

    var publisherFailureCounted = false
    var subscriberFailureCounted = false

    // MARK: RTCP

    /// SRs from the server feed the LSR/DLSR of our RRs (subscriber); report
    /// blocks about our SSRCs give the round-trip time (publisher).
    private func receivedRTCP(_ raw: UnsafeRawBufferPointer, at arrival: Instant, onPublisher: Bool) {
        guard let compound = try? RTCPCompoundPacket.parse(RawSpan(_unsafeBytes: raw)) else {
            return record.error("bad_rtcp")
        }
        for packet in compound.packets {
            var blocks: [ReceptionReport] = []
            switch packet {
            case .senderReport(let sr):
                blocks = sr.reports
                if !onPublisher, record.tracks[sr.ssrc] != nil {
                    record.tracks[sr.ssrc]?.stream.senderReport(sr.senderInfo, arrival: arrival)
                    sinks[sr.ssrc]?.senderReport(ntp: sr.senderInfo.ntpTimestamp, rtpTimestamp: sr.senderInfo.rtpTimestamp)
                }
            case .receiverReport(let rr): blocks = rr.reports
            default: break
            }
            guard onPublisher else { continue }
            switch packet {
            case .pictureLossIndication(let pli):
                record.keyframeRequestsReceived += 1
                mediaSource?.requestKeyframe(ssrc: pli.mediaSSRC)
            case .fullIntraRequest(let fir):
                record.keyframeRequestsReceived += 1
                for entry in fir.entries { mediaSource?.requestKeyframe(ssrc: entry.ssrc) }
            case .transportLayerNACK(let nack):
                record.nacksReceived += 1
                mediaSource?.retransmit(ssrc: nack.mediaSSRC, sequenceNumbers: nack.lostSequenceNumbers)
            default: break
            }
            for block in blocks where sendStats[block.ssrc] != nil {
                if let rtt = roundTrip.roundTrip(block, arrival: arrival) {
                    record.rttMilliseconds.append(Double(rtt.nanoseconds) / 1e6)
                }
            }
        }
    }

    private func recordSent(_ packet: UnsafeRawBufferPointer, now: Instant) {
        guard let header = try? RTPHeader(parsing: RawSpan(_unsafeBytes: packet)) else { return }
        let clockRate: UInt32 = header.ssrc == publication?.audioSSRC ? 48000 : 90000
        var stats = sendStats[header.ssrc] ?? SendStatistics(ssrc: header.ssrc, clockRate: clockRate)
        stats.record(header: header, sentAt: now)
        sendStats[header.ssrc] = stats
        record.sent(bytes: packet.count, at: now)
        if record.recoveringSince != nil, !record.needsSubscriber { record.recovered(at: now) }
    }

    /// Once a second: an SR per SSRC we sent on (publisher), an RR with a
    /// block per received track (subscriber); RFC 3550 section 6.4. Each
    /// compound ends with our SDES CNAME (section 6.1).
    private func sendReports(now: Instant) {
        if let next = nextReport, now < next { return }
        nextReport = now + Self.reportInterval
        if let p = publisher, p.isConnected {
            // The shared NTP clock, so subscribers can map our RTP
            // timestamps to send times: the end-to-end delay of frames
            // that arrive without abs-capture-time.
            let ntp = context.clock.map { NTPTimestamp(rawValue: $0.ntp(at: now)) } ?? RoundTripEstimator.ntp(now)
            for stats in sendStats.values {
                guard let info = reports.addSenderReport(of: stats, now: now, wallClock: ntp) else { continue }
                roundTrip.senderReportSent(compactNTP: info.compactNTP, at: now)
            }
            sendReports(on: p)
        }
        if let s = subscriber, s.isConnected, !record.tracks.isEmpty {
            for ssrc in record.tracks.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
                if let block = record.tracks[ssrc]?.stream.makeReportBlock(now: now) { reports.addReportBlock(block) }
            }
            sendReports(on: s)
        }
    }

    /// The round's compounds, each protected in place and sent.
    private func sendReports(on transport: BotTransport) {
        context.sendBuffer.withUnsafeMutableBytes { buffer in
            // Room for the SRTCP trailer after the compound.
            let room = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(buffer.count - 32)])
            reports.write(into: room) { transport.sendMedia(buffer, length: $0.bytes.count, rtcp: true) }
        }
    }

    func sendRTCP(_ packet: [UInt8], on transport: BotTransport) {
        packet.withUnsafeBytes { sendRTCP($0, on: transport) }
    }

    func sendRTCP(_ packet: UnsafeRawBufferPointer, on transport: BotTransport) {
        guard packet.count + 32 <= context.sendBuffer.count else { return }
        context.sendBuffer.withUnsafeMutableBytes { buffer in
            buffer.copyMemory(from: packet)
            transport.sendMedia(buffer, length: packet.count, rtcp: true)
        }
    }

    /// The earliest of the bot's timers, without building an array; the
    /// loop asks after each `tick` and keeps the answer until the bot is
    /// ticked again.
    var nextDeadline: Instant? {
        var earliest: Instant?
        func consider(_ d: Instant?) {
            if let d, earliest.map({ d < $0 }) ?? true { earliest = d }
        }
        consider(publisher?.nextDeadline)
        consider(subscriber?.nextDeadline)
        consider(mediaSource?.nextDeadline())
        for t in record.tracks.values { consider(t.stream.nextRepairDeadline) }
        consider(arrivals?.nextFeedback)
        consider(reconnectAt)
        consider(retryAt)
        consider(dataStream == nil ? nil : nextDataAt)
        consider(connectDeadline)
        // Every timer `tick` acts on is here: the loop ticks a bot only
        // when one of its sockets was ready or this deadline has passed.
        consider(nextReport)
        consider(nextSwitchAt)
        return earliest
    }

    func leave(now: Instant) {
        guard !leaving else { return }
        // Still trying when the run ended: that is a failed connect too.
        if connectFailures > 0, record.joinedAt == nil, reconnection == nil { giveUpConnecting(now: now) }
        giveUpReconnecting(now: now, at: "the end of the run")
        leaving = true
        send(.leave)
        signaling?.close()
        if let location = sessionLocation {
            // DELETE needs no token: the Location is the capability.
            http = try? HTTPExchange(to: server.endpoint, method: "DELETE", path: location, headers: [], body: [])
            httpPurpose = .delete
            if http != nil { context.registerHTTP(self) }
        }
        publisher?.close(now: now)
        subscriber?.close(now: now)
    }
}
