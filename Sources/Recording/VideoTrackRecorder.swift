import BotMedia
import Codecs
import RTP
import Wire

/// One VP8 video track on its way into a file, sans-IO: packets of every
/// simulcast layer in (as the track's source worker received them, RTX
/// restored), whole frames with their sender wall-clock time out, and the
/// keyframe requests the shell sends to the publisher.
///
/// Per packet: the layer choice (`RecordedLayerChoice`), then the
/// layer's reorder buffer (`RTPReorderBuffer`, waiting up to `repairWait`
/// for a retransmission the server's own NACKs asked for), then roombot's
/// VP8 depacketizer (`VP8FrameAssembler`, RFC 7741), fed in order. A frame
/// is written only from a keyframe on and only while its reference chain
/// is intact (RFC 7741 section 4.2, as the assembler decides): a lost
/// frame that no repair brought back costs the frames that depend on it
/// and a keyframe request, never a corrupt frame in the file. A frame is
/// timed by its layer's Sender Report; frames that arrive before the
/// layer's first report wait for it (at most `untimedLimit`), since the
/// mapping holds for earlier timestamps too.
package struct VideoTrackRecorder {
    package enum Output: Equatable, Sendable {
        /// A frame to write: VP8 bytes (payload descriptors removed).
        case frame(ntpMicroseconds: Int64, isKeyframe: Bool, width: UInt16?, height: UInt16?, bytes: [UInt8])
        /// Ask the publisher for a keyframe of this layer (PLI through
        /// the router's throttle).
        case keyframeRequest(layer: Int)
    }

    package struct Statistics: Equatable, Sendable {
        package var framesWritten = 0
        /// Complete frames whose reference chain was broken, and frames
        /// after a switch or a loss until the next keyframe.
        package var framesSkipped = 0
        /// Frames dropped waiting too long for a first Sender Report.
        package var framesUntimed = 0
        package var malformed = 0
        package var keyframeRequests = 0
        /// Packets the jitter buffer gave up (no repair in time).
        package var packetsGivenUp = 0
        package var layerSwitches = 0
        package init() {}
    }

    package static let largestFrame = 1 << 20
    package let repairWait: Duration
    package let keyframeRequestInterval: Duration
    package private(set) var statistics = Statistics()
    package private(set) var layers: RecordedLayerChoice
    private var clocks: [SenderReportClock]
    private var buffer: RTPReorderBuffer
    private var assembler: VP8FrameAssembler
    private var untimed: [(rtpTimestamp: UInt32, isKeyframe: Bool, width: UInt16?, height: UInt16?, bytes: [UInt8])] = []
    /// About three seconds at 30 frames per second.
    package static let untimedLimit = 90
    /// Whether the next frame to write must be a keyframe.
    private var needsKeyframe = true
    private var lastRequest: Instant?

    package init(layerCount: Int, repairWait: Duration = .milliseconds(400), keyframeRequestInterval: Duration = .seconds(1)) {
        self.repairWait = repairWait
        self.keyframeRequestInterval = keyframeRequestInterval
        layers = RecordedLayerChoice(layerCount: layerCount)
        clocks = [SenderReportClock](repeating: SenderReportClock(clockRate: 90_000), count: layers.layerCount)
        buffer = RTPReorderBuffer(capacity: 512, packetBytes: 1500, repairWait: repairWait)
        assembler = Self.makeAssembler()
    }

    private static func makeAssembler() -> VP8FrameAssembler {
        // Fed in order: a frame still missing packets when two later ones
        // have begun will never complete.
        VP8FrameAssembler(reassemblyCapacity: largestFrame, reorderFrames: 2, reorderWindow: .seconds(2))
    }

    /// The Sender Report of `layer` (RFC 3550 section 6.4.1).
    package mutating func senderReport(layer: Int, ntp: UInt64, rtpTimestamp: UInt32, output: (Output) -> Void) {
        guard clocks.indices.contains(layer) else { return }
        clocks[layer].senderReport(ntp: ntp, rtpTimestamp: rtpTimestamp)
        guard layer == layers.current else { return }
        for f in untimed {
            guard let t = clocks[layer].frameMicroseconds(of: f.rtpTimestamp) else { break }
            statistics.framesWritten += 1
            output(.frame(ntpMicroseconds: t, isKeyframe: f.isKeyframe, width: f.width, height: f.height, bytes: f.bytes))
        }
        untimed.removeAll()
    }

    /// One RTP packet of `layer` (valid only during the call).
    package mutating func packet(
        layer: Int, _ packet: UnsafeRawBufferPointer, now: Instant, output: (Output) -> Void
    ) {
        guard let header = try? RTPHeader(parsing: RawSpan(_unsafeBytes: packet)),
            header.payloadRange.upperBound <= packet.count, header.payloadLength > 0
        else { return statistics.malformed += 1 }
        let startsKeyframe: Bool
        do {
            let payload = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: packet[header.payloadRange]))
            let d = try VP8PayloadDescriptor(parsing: payload)
            startsKeyframe = d.isKeyframe && d.isStartOfPartition && d.partitionIndex == 0
        } catch {
            return statistics.malformed += 1
        }
        switch layers.packet(layer: layer, startsKeyframe: startsKeyframe, now: now) {
        case .ignore:
            requestKeyframeIfWorthIt(now: now, output: output)
            return
        case .switchTo:
            // Whatever the old layer still held goes out first; the new
            // layer starts with empty buffers.
            drain(now: now, flush: true, output: output)
            buffer = RTPReorderBuffer(capacity: buffer.capacity, packetBytes: buffer.packetBytes, repairWait: repairWait)
            assembler = Self.makeAssembler()
            untimed.removeAll()
            needsKeyframe = true
            statistics.layerSwitches += 1
        case .record: break
        }
        buffer.insert(sequenceNumber: header.sequenceNumber, packet: packet, now: now) { p, skipped in
            assemble(p, skipped: skipped, now: now, output: output)
        }
        drain(now: now, flush: false, output: output)
        requestKeyframeIfWorthIt(now: now, output: output)
    }

    /// Gives up packets that waited past `repairWait` (call at
    /// `repairDeadline`, or periodically).
    package mutating func tick(now: Instant, output: (Output) -> Void) {
        drain(now: now, flush: false, output: output)
        requestKeyframeIfWorthIt(now: now, output: output)
    }

    /// The end of the track: what is held goes out, gaps skipped.
    package mutating func finish(now: Instant, output: (Output) -> Void) {
        drain(now: now, flush: true, output: output)
    }

    package var repairDeadline: Instant? { buffer.repairDeadline }

    private mutating func drain(now: Instant, flush: Bool, output: (Output) -> Void) {
        if flush {
            buffer.flush { p, skipped in assemble(p, skipped: skipped, now: now, output: output) }
            var frame = assembler.flush(now: now)
            while let f = frame {
                emit(f, output: output)
                frame = assembler.nextFrame()
            }
        } else {
            buffer.drain(now: now) { p, skipped in assemble(p, skipped: skipped, now: now, output: output) }
        }
    }

    private mutating func assemble(
        _ packet: UnsafeRawBufferPointer, skipped: Int, now: Instant, output: (Output) -> Void
    ) {
        guard let header = try? RTPHeader(parsing: RawSpan(_unsafeBytes: packet)) else { return }
        // A packet given up for good: whether the frames after it decode
        // is the assembler's call (a lost frame of an upper temporal layer
        // breaks nothing below it), but a keyframe is asked for now rather
        // than when the next frame proves undecodable.
        if skipped > 0 {
            statistics.packetsGivenUp += skipped
            requestKeyframe(layer: layers.current, now: now, output: output)
        }
        var frame = assembler.handle(header, packet: RawSpan(_unsafeBytes: packet), arrival: now)
        while let f = frame {
            emit(f, output: output)
            frame = assembler.nextFrame()
        }
    }

    private mutating func emit(_ frame: VP8FrameAssembler.Frame, output: (Output) -> Void) {
        guard frame.isDecodable, frame.hasBytes, !(needsKeyframe && !frame.isKeyframe) else {
            statistics.framesSkipped += 1
            needsKeyframe = needsKeyframe || !frame.isDecodable
            return
        }
        guard let layer = layers.current else { return }
        needsKeyframe = false
        let bytes = assembler.frameBuffer.withUnsafeBufferPointer { Array($0[0..<frame.byteCount]) }
        guard let ntp = clocks[layer].frameMicroseconds(of: frame.rtpTimestamp) else {
            if untimed.count >= Self.untimedLimit {
                // The oldest goes; the chain after it is broken until a
                // keyframe, so everything held goes.
                statistics.framesUntimed += untimed.count
                untimed.removeAll()
                needsKeyframe = !frame.isKeyframe
                if needsKeyframe { return }
            }
            untimed.append((frame.rtpTimestamp, frame.isKeyframe, frame.width, frame.height, bytes))
            return
        }
        statistics.framesWritten += 1
        output(
            .frame(
                ntpMicroseconds: ntp, isKeyframe: frame.isKeyframe, width: frame.width, height: frame.height, bytes: bytes))
    }

    /// A keyframe is worth asking for while nothing can be written (the
    /// start, a loss, an untimed start) or a higher layer than the one
    /// written is arriving; at most once per `keyframeRequestInterval`.
    private mutating func requestKeyframe(layer: Int?, now: Instant, output: (Output) -> Void) {
        guard let layer else { return }
        if let at = lastRequest, now - at < keyframeRequestInterval { return }
        lastRequest = now
        statistics.keyframeRequests += 1
        output(.keyframeRequest(layer: layer))
    }

    private mutating func requestKeyframeIfWorthIt(now: Instant, output: (Output) -> Void) {
        if let at = lastRequest, now - at < keyframeRequestInterval { return }
        let wanted = layers.wantedLayer(now: now)
        let layer: Int
        if let w = wanted, let c = layers.current, w > c {
            layer = w
        } else if needsKeyframe || layers.current == nil, let w = wanted ?? layers.current {
            layer = w
        } else {
            return
        }
        lastRequest = now
        statistics.keyframeRequests += 1
        output(.keyframeRequest(layer: layer))
    }
}
