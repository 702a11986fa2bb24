import RTP
import Wire

/// What one publishing bot negotiated: its SSRCs, payload types, mids,
/// rids and the extension IDs to write.
package struct PublisherMediaConfiguration: Equatable, Sendable {
    package struct VideoLayer: Equatable, Sendable {
        package var rid: RID?
        package var ssrc: SSRC
        package var rtxSSRC: SSRC?
        package init(rid: RID?, ssrc: SSRC, rtxSSRC: SSRC?) {
            self.rid = rid
            self.ssrc = ssrc
            self.rtxSSRC = rtxSSRC
        }
    }

    package var audioSSRC: SSRC?
    package var audioMID: MID?
    package var audioPayloadType: PayloadType
    package var audioExtensions: HeaderExtensionIDs
    /// Lowest resolution first; layer i loops clip i.
    package var videoLayers: [VideoLayer]
    package var videoMID: MID?
    package var videoPayloadType: PayloadType
    package var videoRTXPayloadType: PayloadType
    package var videoExtensions: HeaderExtensionIDs
    /// urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id (RFC 8852
    /// section 3.2), written on RTX packets in place of the rid.
    package var repairedRIDExtensionID: UInt8?

    package init(
        audioSSRC: SSRC?, audioMID: MID?, audioPayloadType: PayloadType, audioExtensions: HeaderExtensionIDs,
        videoLayers: [VideoLayer], videoMID: MID?, videoPayloadType: PayloadType, videoRTXPayloadType: PayloadType,
        videoExtensions: HeaderExtensionIDs, repairedRIDExtensionID: UInt8?
    ) {
        self.audioSSRC = audioSSRC
        self.audioMID = audioMID
        self.audioPayloadType = audioPayloadType
        self.audioExtensions = audioExtensions
        self.videoLayers = videoLayers
        self.videoMID = videoMID
        self.videoPayloadType = videoPayloadType
        self.videoRTXPayloadType = videoRTXPayloadType
        self.videoExtensions = videoExtensions
        self.repairedRIDExtensionID = repairedRIDExtensionID
    }
}

/// A publisher's media in real time: loops the shared clips (30 fps per
/// video layer, 20 ms Opus), one packet per `nextPacket` call in send
/// order, with one transport-wide sequence counter across all its SSRCs
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 2), the
/// NTP time as abs-capture-time and abs-send-time, and answers to the
/// receiver's feedback: a keyframe request (RFC 4585 section 6.3.1 PLI,
/// RFC 5104 section 4.3.1 FIR) jumps the layer to its clip's next keyframe,
/// a NACK (RFC 4585 section 6.2.1) is answered from the packet history as
/// RTX (RFC 4588 section 4), and `setActive` stops or resumes a simulcast
/// layer (dynacast). Sans-IO: time comes in as `now`.
///
/// A source that falls more than `maxLag` behind (the bot loop stalled)
/// skips the missed frames instead of bursting them, as a live encoder
/// would drop them.
package final class MediaPublisher {
    struct VideoStream {
        var layer: PublisherMediaConfiguration.VideoLayer
        var clip: VideoClip
        var packetizer: VideoPacketizer
        var rtx: RTPHeaderWriter?
        var rtxSequenceNumber: UInt16
        var frameIndex = 0
        var timestamp: UInt32
        var nextDue: Instant
        var active = true
        var interval: Duration
    }

    struct AudioStream {
        var clip: AudioClip
        var packetizer: OpusPacketizer
        var frameIndex = 0
        var timestamp: UInt32
        var nextDue: Instant
    }

    package struct Statistics: Equatable, Sendable {
        package var packetsSent = 0
        package var framesSent = 0
        package var keyframeRequests = 0
        package var keyframesSent = 0
        package var nackedPackets = 0
        package var retransmissions = 0
        /// NACKed packets no longer in the history.
        package var retransmissionsMissed = 0
        package var framesSkipped = 0
        package init() {}
    }

    package static let maxLag = Duration.milliseconds(200)
    package let clock: NTPClock
    package private(set) var statistics = Statistics()
    package private(set) var transportSequenceNumber: UInt16
    var video: [VideoStream] = []
    var audio: AudioStream?
    let history: PacketHistory
    private let scratch: UnsafeMutableRawBufferPointer
    /// Retransmissions waiting: history slot, SSRC and sequence number.
    private var retransmitQueue: [(slot: Int, ssrc: SSRC, sequenceNumber: UInt16)] = []
    private static let maxQueuedRetransmissions = 128

    /// `videoClips[i]` is looped on `configuration.videoLayers[i]` (a
    /// missing clip leaves that layer silent). `seed` varies the initial
    /// sequence numbers, timestamps and picture IDs (RFC 3550 section 5.1).
    package init(
        configuration c: PublisherMediaConfiguration, audioClip: AudioClip?, videoClips: [VideoClip], clock: NTPClock,
        start: Instant, seed: UInt64
    ) throws(BotMediaError) {
        self.clock = clock
        var random = seed == 0 ? 0x9E37_79B9 : seed
        func next() -> UInt64 {
            random ^= random << 13
            random ^= random >> 7
            random ^= random << 17
            return random
        }
        transportSequenceNumber = UInt16(truncatingIfNeeded: next())
        history = PacketHistory(capacity: 1024)
        scratch = .allocate(byteCount: PacketHistory.slotSize, alignment: 8)
        retransmitQueue.reserveCapacity(Self.maxQueuedRetransmissions)
        if let ssrc = c.audioSSRC, let clip = audioClip, !clip.frames.isEmpty {
            let packetizer = try OpusPacketizer(
                ssrc: ssrc, payloadType: c.audioPayloadType, extensionIDs: c.audioExtensions, mid: c.audioMID,
                initialSequenceNumber: UInt16(truncatingIfNeeded: next()))
            audio = AudioStream(
                clip: clip, packetizer: packetizer, timestamp: UInt32(truncatingIfNeeded: next()), nextDue: start)
        }
        for (index, layer) in c.videoLayers.enumerated() where index < videoClips.count {
            let clip = videoClips[index]
            guard !clip.frames.isEmpty else { continue }
            let packetizer = try VideoPacketizer(
                codec: clip.codec, ssrc: layer.ssrc, payloadType: c.videoPayloadType, extensionIDs: c.videoExtensions,
                mid: c.videoMID,
                rid: layer.rid, initialSequenceNumber: UInt16(truncatingIfNeeded: next()),
                initialPictureID: UInt16(truncatingIfNeeded: next()))
            var rtx: RTPHeaderWriter?
            if let rtxSSRC = layer.rtxSSRC {
                var ids = c.videoExtensions
                ids.rtpStreamID = c.repairedRIDExtensionID
                ids.absoluteCaptureTime = nil
                rtx = RTPHeaderWriter(
                    ssrc: rtxSSRC, payloadType: c.videoRTXPayloadType, ids: ids, mid: c.videoMID, rid: layer.rid)
            }
            video.append(
                VideoStream(
                    layer: layer, clip: clip, packetizer: packetizer, rtx: rtx,
                    rtxSequenceNumber: UInt16(truncatingIfNeeded: next()), timestamp: UInt32(truncatingIfNeeded: next()),
                    nextDue: start, interval: .nanoseconds(1_000_000_000 / Int64(max(1, clip.framesPerSecond)))))
        }
    }

    deinit { scratch.deallocate() }

    /// The next packet due at `now`, written at the start of `buffer`;
    /// nil when nothing is due. Queued packets of a frame come first, then
    /// retransmissions, then the next due frame.
    package func nextPacket(into buffer: UnsafeMutableRawBufferPointer, now: Instant) -> Int? {
        while true {
            if let n = history.nextUnsent(into: buffer) {
                statistics.packetsSent += 1
                return n
            }
            if !retransmitQueue.isEmpty {
                let request = retransmitQueue.removeFirst()
                if let n = retransmission(request, into: buffer, now: now) {
                    statistics.retransmissions += 1
                    return n
                }
                continue
            }
            guard produceNextFrame(now: now) else { return nil }
        }
    }

    /// When the next frame is due; now when packets are waiting.
    package func nextDeadline() -> Instant? {
        var due = [audio?.nextDue].compactMap { $0 }.min()
        for v in video { due = min(due ?? v.nextDue, v.nextDue) }
        return due
    }

    /// Whether packets are queued (a frame's tail or retransmissions).
    package var hasQueuedPackets: Bool { history.pending > 0 || !retransmitQueue.isEmpty }

    /// A PLI or FIR for `ssrc`: the layer's next frame is its clip's next
    /// keyframe (the loop point is one). Returns false for an unknown SSRC.
    @discardableResult
    package func requestKeyframe(ssrc: SSRC) -> Bool {
        guard let i = video.firstIndex(where: { $0.layer.ssrc == ssrc }) else { return false }
        statistics.keyframeRequests += 1
        jumpToKeyframe(i)
        return true
    }

    /// A NACK for `ssrc`: each sequence number still in the history is
    /// retransmitted as RTX (video layers with an RTX SSRC only).
    package func retransmit(ssrc: SSRC, sequenceNumbers: [UInt16]) {
        guard video.contains(where: { $0.layer.ssrc == ssrc && $0.rtx != nil }) else { return }
        for s in sequenceNumbers {
            statistics.nackedPackets += 1
            guard let slot = history.slot(ssrc: ssrc, sequenceNumber: s) else {
                statistics.retransmissionsMissed += 1
                continue
            }
            guard retransmitQueue.count < Self.maxQueuedRetransmissions else { return }
            retransmitQueue.append((slot, ssrc, s))
        }
    }

    /// Dynacast (docs/PROTOCOL.md `publisher-layers`): stops or resumes
    /// the layer with `rid`; a resumed layer starts on a keyframe.
    package func setActive(rid: RID, _ active: Bool) {
        for i in video.indices where video[i].layer.rid == rid && video[i].active != active {
            video[i].active = active
            if active { jumpToKeyframe(i) }
        }
    }

    package func isActive(rid: RID) -> Bool? { video.first { $0.layer.rid == rid }?.active }

    private func jumpToKeyframe(_ i: Int) {
        let frames = video[i].clip.frames
        var index = video[i].frameIndex % max(1, frames.count)
        if frames.indices.contains(index), frames[index].isKeyframe { return }
        for _ in 0..<frames.count {
            index = (index + 1) % frames.count
            if frames[index].isKeyframe { break }
        }
        video[i].frameIndex = index
    }

    /// Packetizes the earliest frame due at `now` into the history.
    private func produceNextFrame(now: Instant) -> Bool {
        var best: Int?  // -1 = audio
        var bestDue: Instant?
        if let a = audio, a.nextDue <= now {
            best = -1
            bestDue = a.nextDue
        }
        for (i, v) in video.enumerated() where v.nextDue <= now && (bestDue.map { v.nextDue < $0 } ?? true) {
            best = i
            bestDue = v.nextDue
        }
        guard let best else { return false }
        if best < 0 { sendAudioFrame(now: now) } else { sendVideoFrame(best, now: now) }
        return true
    }

    private func sendAudioFrame(now: Instant) {
        guard var a = audio else { return }
        let frame = a.clip.frames[a.frameIndex]
        let ntp = clock.ntp(at: now)
        let history = history
        let scratch = scratch
        let ssrc = a.packetizer.header.ssrc
        let sequenceNumber = a.packetizer.sequenceNumber
        if (try? a.packetizer.packetize(
            frame, rtpTimestamp: a.timestamp, captureTime: ntp, absSendTime: clock.absSendTime(at: now),
            transportSequenceNumber: &transportSequenceNumber, into: scratch,
            emit: { n in
                history.append(UnsafeRawBufferPointer(rebasing: scratch[0..<n]), ssrc: ssrc, sequenceNumber: sequenceNumber)
            })) == 1
        {
            statistics.framesSent += 1
        }
        a.frameIndex = (a.frameIndex + 1) % a.clip.frames.count
        a.timestamp &+= a.clip.rtpTimestampStep
        a.nextDue += .milliseconds(20)
        if now - a.nextDue > Self.maxLag {
            statistics.framesSkipped += 1
            a.nextDue = now
        }
        audio = a
    }

    private func sendVideoFrame(_ i: Int, now: Instant) {
        var v = video[i]
        let frames = v.clip.frames
        let frame = frames[v.frameIndex % frames.count]
        if v.active {
            let history = history
            let scratch = scratch
            let ssrc = v.layer.ssrc
            var sequenceNumber = v.packetizer.sequenceNumber
            do {
                try v.packetizer.packetize(
                    frame, rtpTimestamp: v.timestamp, captureTime: clock.ntp(at: now),
                    absSendTime: clock.absSendTime(at: now), transportSequenceNumber: &transportSequenceNumber,
                    into: scratch,
                    emit: { n in
                        history.append(
                            UnsafeRawBufferPointer(rebasing: scratch[0..<n]), ssrc: ssrc, sequenceNumber: sequenceNumber)
                        sequenceNumber &+= 1
                    })
                statistics.framesSent += 1
                if frame.isKeyframe { statistics.keyframesSent += 1 }
            } catch {
                // The clip's frames fit the scratch slot; a failure skips the frame.
            }
        }
        v.frameIndex = (v.frameIndex + 1) % frames.count
        v.timestamp &+= v.clip.rtpTimestampStep
        v.nextDue += v.interval
        if now - v.nextDue > Self.maxLag {
            statistics.framesSkipped += 1
            v.nextDue = now
        }
        video[i] = v
    }

    /// RFC 4588 section 4: the RTX packet keeps the original timestamp and
    /// marker, takes the RTX SSRC, payload type and its own sequence
    /// number, and starts its payload with the original sequence number.
    private func retransmission(
        _ r: (slot: Int, ssrc: SSRC, sequenceNumber: UInt16), into buffer: UnsafeMutableRawBufferPointer, now: Instant
    ) -> Int? {
        guard history.holds(slot: r.slot, ssrc: r.ssrc, sequenceNumber: r.sequenceNumber),
            let i = video.firstIndex(where: { $0.layer.ssrc == r.ssrc }), let writer = video[i].rtx
        else {
            statistics.retransmissionsMissed += 1
            return nil
        }
        let original = history.packet(slot: r.slot)
        guard let header = try? RTPHeader(parsing: RawSpan(_unsafeBytes: original)) else { return nil }
        var values = RTPHeaderWriter.Values(absSendTime: clock.absSendTime(at: now))
        if writer.ids.transportWideSequenceNumber != nil {
            values.transportSequenceNumber = transportSequenceNumber
        }
        let headerLength = writer.headerLength(values)
        let length = headerLength + 2 + header.payloadLength
        guard length <= buffer.count, header.payloadRange.upperBound <= original.count else { return nil }
        if writer.ids.transportWideSequenceNumber != nil { transportSequenceNumber &+= 1 }
        let out = MutableBytes(buffer)
        _ = writer.write(
            marker: header.marker, sequenceNumber: video[i].rtxSequenceNumber, timestamp: header.timestamp,
            values: values, into: out)
        video[i].rtxSequenceNumber &+= 1
        out.store(r.sequenceNumber, at: headerLength)
        UnsafeMutableRawBufferPointer(rebasing: buffer[headerLength + 2..<length])
            .copyMemory(from: UnsafeRawBufferPointer(rebasing: original[header.payloadRange]))
        return length
    }
}
