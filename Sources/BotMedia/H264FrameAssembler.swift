import Codecs
import RTP
import Wire

/// What a subscriber bot does with a received H.264 stream of
/// packetization mode 1 (RFC 6184): fed every RTP packet of one track in
/// arrival order, it rebuilds each access unit (all packets of one RTP
/// timestamp, the last with the marker, section 5.1) in the Annex B form a
/// decoder reads (`H264Decoder`): every NAL unit behind a 4-byte start
/// code. Payloads are read with `H264PayloadDescriptor`: a single NAL unit
/// is copied as it is, a STAP-A is split into its units (section 5.7.1),
/// FU-A fragments are joined and the unit's header rebuilt from the FU
/// indicator's F and NRI and the FU header's type (section 5.8).
///
/// Loss: H.264 P frames reference the frame before (one reference frame,
/// as `H264Encoder` uses), so a frame
/// missing any packet (a sequence gap, an FU-A without its start or end,
/// a frame without its marker, a malformed packet) is dropped, and every
/// frame after it is undecodable until the next decoder refresh: an IDR
/// with its SPS and PPS in the same access unit (H.264 section 7.4.1.2.3,
/// `H264KeyframeTracker`). The same holds from the start and after the
/// SSRC changes (a switch, counted when the next complete frame arrives).
/// Late packets (behind the newest sequence number) are not used: the
/// frame they belonged to was already given up; they are counted out of
/// order. Interleaved-mode payloads (STAP-B, MTAP, FU-B) break the frame
/// they arrive in.
///
/// Per packet nothing is allocated: the frame buffer of
/// `reassemblyCapacity` bytes is allocated at init and a larger frame is
/// dropped as incomplete (`framesTooLarge`). Every copy is bounded by that
/// capacity and by the bytes present.
package struct H264FrameAssembler: Sendable {
    package struct Statistics: Equatable, Sendable {
        package var packets = 0
        /// Packets that were not a valid H.264 RTP payload.
        package var malformedPackets = 0
        /// STAP-B, MTAP16, MTAP24, FU-B: interleaved mode only.
        package var unsupportedPackets = 0
        /// Sequence numbers skipped on arrival.
        package var packetsLost = 0
        /// Duplicates and late packets, ignored.
        package var packetsOutOfOrder = 0
        package var framesComplete = 0
        /// Frames given up without all their packets (including too large).
        package var framesIncomplete = 0
        /// Frames over `reassemblyCapacity`, given up.
        package var framesTooLarge = 0
        /// Complete decoder refreshes (IDR with SPS and PPS).
        package var keyframes = 0
        /// Complete frames that came while waiting for a refresh.
        package var framesUndecodable = 0
        package var switches = 0
        package var switchesNotOnKeyframe = 0
        package init() {}
    }

    /// One complete access unit.
    package struct Frame: Equatable, Sendable {
        package var ssrc: SSRC
        package var rtpTimestamp: UInt32
        /// An IDR with its SPS and PPS: decodable on its own.
        package var isKeyframe: Bool
        /// Every earlier frame it may reference arrived: the decoder can
        /// take it. Only then are its bytes in `frameBuffer`.
        package var isDecodable: Bool
        /// NTP UQ32.32 from abs-capture-time, when a packet carried it.
        package var captureTime: UInt64?
        /// Arrival of the packet with the marker.
        package var completedAt: Instant
        /// Annex B bytes in `frameBuffer[0..<byteCount]`.
        package var byteCount: Int
        package var packetCount: Int
    }

    struct Building {
        var timestamp: UInt32
        var packetCount = 0
        var broken = false
        var fragmentOpen = false
        var sawIDR = false
        var sawSPS = false
        var sawPPS = false
        var captureTime: UInt64?
    }

    package let absCaptureTimeID: UInt8?
    package internal(set) var statistics = Statistics()
    /// The bytes of the last decodable frame, `[0..<Frame.byteCount]`,
    /// until the next packet.
    package private(set) var frameBuffer: [UInt8]
    var length = 0
    var ssrc: SSRC?
    /// Extended sequence numbers start at 2^32 (as `VP8FrameAssembler`).
    var highestSequence: UInt64?
    var building: Building?
    /// Nothing is decodable until a refresh: from the start, after a loss
    /// or a switch.
    package private(set) var waitingForRefresh = true
    var pendingSwitch = false

    static let startCode: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 1)

    /// `reassemblyCapacity`: the largest access unit taken, 4 KiB...64 MiB
    /// (default 1 MiB: a 1280x720 IDR of the roombot clip is about 30 KB).
    package init(absCaptureTimeID: UInt8? = nil, reassemblyCapacity: Int = 1 << 20) {
        self.absCaptureTimeID = absCaptureTimeID
        frameBuffer = [UInt8](repeating: 0, count: min(max(reassemblyCapacity, 4096), 64 << 20))
    }

    /// The decoder rejected the last frame: wait for the next refresh, as
    /// after a loss.
    package mutating func decoderFailed() { waitingForRefresh = true }

    /// Feeds one RTP packet (`header` parsed from `packet`); returns the
    /// access unit this packet completed, if any.
    package mutating func handle(_ header: RTPHeader, packet: RawSpan, arrival: Instant) -> Frame? {
        statistics.packets += 1
        if let current = ssrc, current != header.ssrc {
            if building != nil { giveUp() }
            highestSequence = nil
            waitingForRefresh = true
            pendingSwitch = true
        }
        ssrc = header.ssrc
        guard accept(header.sequenceNumber, timestamp: header.timestamp) else { return nil }
        if let b = building, b.timestamp != header.timestamp { giveUp() }
        if building == nil {
            building = Building(timestamp: header.timestamp)
            length = 0
        }
        building?.packetCount += 1
        guard header.payloadRange.upperBound <= packet.byteCount, header.payloadLength > 0,
            let descriptor = try? H264PayloadDescriptor(parsing: packet.extracting(header.payloadRange))
        else {
            statistics.malformedPackets += 1
            building?.broken = true
            return finish(header, arrival: arrival)
        }
        let payload = packet.extracting(header.payloadRange)
        append(payload, descriptor)
        if let id = absCaptureTimeID, let range = header.extensionValueRange(id: id, in: packet),
            range.upperBound <= packet.byteCount, range.count == 8 || range.count == 16
        {
            var value: UInt64 = 0
            for i in 0..<8 { value = value << 8 | UInt64(packet.byte(at: range.lowerBound + i)) }
            building?.captureTime = value
        }
        return finish(header, arrival: arrival)
    }

    /// Extends the sequence number; false for a duplicate or late packet.
    /// A gap breaks the frame of this timestamp and everything after it.
    private mutating func accept(_ sequenceNumber: UInt16, timestamp: UInt32) -> Bool {
        guard let highest = highestSequence else {
            highestSequence = 1 << 32 | UInt64(sequenceNumber)
            return true
        }
        let delta = Int64(Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: highest)))
        guard delta > 0 else {
            statistics.packetsOutOfOrder += 1
            return false
        }
        highestSequence = UInt64(Int64(bitPattern: highest) + delta)
        if delta > 1 {
            statistics.packetsLost += Int(delta - 1)
            waitingForRefresh = true
            if building?.timestamp == timestamp { building?.broken = true }
        }
        return true
    }

    private mutating func append(_ payload: RawSpan, _ d: H264PayloadDescriptor) {
        guard var b = building else { return }
        b.sawIDR = b.sawIDR || d.containsIDR
        b.sawSPS = b.sawSPS || d.containsSPS
        b.sawPPS = b.sawPPS || d.containsPPS
        switch d.packetization {
        case .singleNALUnit:
            if b.fragmentOpen { b.broken = true }
            if !b.broken { b.broken = !copy(payload, startCode: true, nalHeader: nil) }
        case .stapA:
            if b.fragmentOpen { b.broken = true }
            var units = H264PayloadDescriptor.STAPAUnits()
            while !b.broken, let unit = units.next(in: payload) {
                b.broken = !copy(payload.extracting(unit), startCode: true, nalHeader: nil)
            }
        case .fuA(let isStart, let isEnd, let type):
            // RFC 6184 section 5.8: a fragment without the ones before it
            // cannot be used; a start while one is open means the end of
            // the previous unit is missing.
            if isStart == b.fragmentOpen { b.broken = true }
            if !b.broken {
                let rest = payload.extracting(2..<payload.byteCount)
                let header = isStart ? payload.byte(at: 0) & 0xE0 | type : nil
                b.broken = !copy(rest, startCode: isStart, nalHeader: header)
                b.fragmentOpen = !isEnd
            }
        case .unsupported:
            statistics.unsupportedPackets += 1
            b.broken = true
        }
        building = b
    }

    /// Appends a start code and header when asked, then `bytes`; false
    /// (and nothing written) when the frame buffer cannot hold them.
    private mutating func copy(_ bytes: RawSpan, startCode: Bool, nalHeader: UInt8?) -> Bool {
        let needed = (startCode ? 4 : 0) + (nalHeader == nil ? 0 : 1) + bytes.byteCount
        guard frameBuffer.count - length >= needed else {
            statistics.framesTooLarge += 1
            return false
        }
        let start = length
        frameBuffer.withUnsafeMutableBytes { target in
            var at = start
            if startCode {
                target[at] = 0
                target[at + 1] = 0
                target[at + 2] = 0
                target[at + 3] = 1
                at += 4
            }
            if let h = nalHeader {
                target[at] = h
                at += 1
            }
            let from = at
            bytes.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: target[from..<from + source.count]).copyMemory(from: source)
            }
        }
        length += needed
        return true
    }

    /// At the marker, the access unit is done: complete or given up.
    private mutating func finish(_ header: RTPHeader, arrival: Instant) -> Frame? {
        guard header.marker, let b = building else { return nil }
        if b.broken || b.fragmentOpen {
            giveUp()
            return nil
        }
        building = nil
        statistics.framesComplete += 1
        let refresh = b.sawIDR && b.sawSPS && b.sawPPS
        if refresh {
            statistics.keyframes += 1
            waitingForRefresh = false
        }
        if pendingSwitch {
            statistics.switches += 1
            if !refresh { statistics.switchesNotOnKeyframe += 1 }
            pendingSwitch = false
        }
        let decodable = !waitingForRefresh
        if !decodable { statistics.framesUndecodable += 1 }
        return Frame(
            ssrc: header.ssrc, rtpTimestamp: b.timestamp, isKeyframe: refresh, isDecodable: decodable,
            captureTime: b.captureTime, completedAt: arrival, byteCount: decodable ? length : 0,
            packetCount: b.packetCount)
    }

    private mutating func giveUp() {
        statistics.framesIncomplete += 1
        waitingForRefresh = true
        building = nil
        length = 0
    }
}
