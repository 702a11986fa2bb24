import Wire

/// Transport-wide congestion control feedback as parsed from the wire
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 3.1):
/// the fixed fields, and where the packet chunks and receive deltas lie.
/// Nothing is expanded: a feedback that claims 65,535 statuses with a few
/// run-length chunks costs the same to parse as one that claims ten.
///
/// Parsing walks the chunks once (O(bytes), never O(status count)) to
/// check that they cover `statusCount` statuses, that no status symbol is
/// the reserved 3, and that every received status has its delta bytes.
/// After that, `statuses(in:positions:)` walks the statuses in place over
/// the packet's bytes and cannot fail.
///
/// `TransportLayerCC` is the expanded value (statuses in an array) that
/// builders serialize; `TransportLayerCC(expanding:packet:)` converts, for
/// control-plane callers and tests only: the media path walks.
package struct TransportCCFeedback: Equatable, Sendable {
    package var senderSSRC: SSRC
    package var mediaSSRC: SSRC
    package var baseSequenceNumber: UInt16
    /// The packet status count field: statuses of base, base + 1, ...
    package var statusCount: Int
    /// 24-bit signed, in 64 ms units, sign-extended.
    package var referenceTime: Int32
    package var feedbackPacketCount: UInt8
    /// Packet chunks, then receive deltas, as offsets from the packet's
    /// first byte (the common header); bytes after `deltas` are padding.
    package var chunks: Range<Int>
    package var deltas: Range<Int>
    /// Statuses that are "received" (each has a delta).
    package var receivedCount: Int

    package init(
        senderSSRC: SSRC, mediaSSRC: SSRC, baseSequenceNumber: UInt16, statusCount: Int, referenceTime: Int32,
        feedbackPacketCount: UInt8, chunks: Range<Int>, deltas: Range<Int>, receivedCount: Int
    ) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.baseSequenceNumber = baseSequenceNumber
        self.statusCount = statusCount
        self.referenceTime = referenceTime
        self.feedbackPacketCount = feedbackPacketCount
        self.chunks = chunks
        self.deltas = deltas
        self.receivedCount = receivedCount
    }

    /// The reference time as a duration in the feedback sender's time base.
    package var referenceTimeOffset: Duration { TransportLayerCC.referenceTimeUnit * Int(referenceTime) }

    /// Walks the statuses at `positions` (0 is the base sequence number;
    /// clamped to 0 ..< statusCount) over `packet`, the bytes of this
    /// feedback's packet from its common header on. Statuses before the
    /// range are skipped chunk by chunk; only their delta bytes are summed,
    /// so the cost is bounded by the packet's bytes plus the range, not by
    /// the status count. `packet` must be the bytes this value was parsed
    /// from.
    @_lifetime(copy packet)
    package func statuses(in packet: RawSpan, positions: Range<Int>? = nil) -> TransportCCStatusWalker {
        let all = 0..<statusCount
        let wanted = positions?.clamped(to: all) ?? all
        return TransportCCStatusWalker(feedback: self, packet: packet, positions: wanted)
    }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> TransportCCFeedback {
        let sender = try reader.ssrc(or: .truncated)
        let media = try reader.ssrc(or: .truncated)
        let base = try reader.uint16(or: RTCPParseError.truncated)
        let count = Int(try reader.uint16(or: RTCPParseError.truncated))
        let reference24 = try reader.uint24(or: RTCPParseError.truncated)
        let feedbackCount = try reader.uint8(or: RTCPParseError.truncated)

        // One pass over the chunks, per chunk not per status: a run-length
        // chunk of r received statuses needs r (small) or 2r (large) delta
        // bytes, which are checked against the bytes present below.
        let chunkStart = reader.offset
        var covered = 0
        var deltaBytes = 0
        var received = 0
        while covered < count {
            let chunk = try reader.uint16(or: RTCPParseError.countBeyondPacket)
            let left = count - covered
            if chunk & 0x8000 == 0 {
                // Run-length chunk: T=0 | symbol (2) | run length (13).
                let symbol = Int(chunk >> 13) & 0x3
                let run = min(Int(chunk & 0x1FFF), left)
                if run > 0 {
                    guard symbol != 3 else { throw .reservedStatusSymbol }
                    deltaBytes += symbol * run
                    if symbol != 0 { received += run }
                }
                covered += run
            } else {
                let slots = min(chunk & 0x4000 == 0 ? 14 : 7, left)
                for i in 0..<slots {
                    let symbol = TransportCCStatusWalker.vectorSymbol(chunk, i)
                    guard symbol != 3 else { throw .reservedStatusSymbol }
                    deltaBytes += Int(symbol)
                    if symbol != 0 { received += 1 }
                }
                covered += slots
            }
        }
        let deltaStart = reader.offset
        guard reader.canRead(deltaBytes) else { throw .truncated }
        return TransportCCFeedback(
            senderSSRC: sender, mediaSSRC: media, baseSequenceNumber: base, statusCount: count,
            referenceTime: Int32(bitPattern: reference24 << 8) >> 8, feedbackPacketCount: feedbackCount,
            chunks: chunkStart..<deltaStart, deltas: deltaStart..<deltaStart + deltaBytes, receivedCount: received)
    }
}

/// The statuses of one `TransportCCFeedback`, read in place from the
/// packet's bytes: (sequence number, status, arrival) per position in the
/// requested range, in order. Allocates nothing. The feedback was
/// validated when parsed, so every read here is inside the packet.
package struct TransportCCStatusWalker: ~Escapable {
    private let packet: RawSpan
    private let base: UInt16
    private let endPosition: Int
    private let count: Int
    private var chunkOffset: Int
    private var deltaOffset: Int
    /// Position of the next status to produce.
    private var position: Int
    /// Arrival of the last received status so far, in 250 us ticks.
    private var ticks: Int64
    /// The current chunk and how many of its statuses are left.
    private var chunk: UInt16 = 0
    private var chunkUsed = 0
    private var chunkLeft = 0
    /// Statuses produced so far.
    package private(set) var visited = 0

    @_lifetime(copy packet)
    init(feedback: TransportCCFeedback, packet: RawSpan, positions: Range<Int>) {
        self.packet = packet
        base = feedback.baseSequenceNumber
        count = feedback.statusCount
        endPosition = positions.upperBound
        chunkOffset = feedback.chunks.lowerBound
        deltaOffset = feedback.deltas.lowerBound
        position = 0
        ticks = Int64(feedback.referenceTime) * 256
        skip(to: positions.lowerBound)
    }

    /// The 2-bit (or 1-bit) symbol at slot `i` of a status vector chunk.
    @inline(__always)
    static func vectorSymbol(_ chunk: UInt16, _ i: Int) -> UInt8 {
        chunk & 0x4000 == 0
            ? UInt8(truncatingIfNeeded: chunk >> (13 - i)) & 0x1 : UInt8(truncatingIfNeeded: chunk >> (12 - 2 * i)) & 0x3
    }

    package mutating func next() -> TransportCCPacketResult? {
        guard position < endPosition else { return nil }
        while chunkLeft == 0 { loadChunk() }
        let symbol =
            chunk & 0x8000 == 0 ? UInt8(truncatingIfNeeded: chunk >> 13) & 0x3 : Self.vectorSymbol(chunk, chunkUsed)
        chunkUsed += 1
        chunkLeft -= 1
        let status = readStatus(symbol)
        var arrival: Duration?
        if let delta = status.deltaTicks {
            ticks &+= Int64(delta)
            arrival = .microseconds(ticks &* 250)
        }
        let result = TransportCCPacketResult(
            sequenceNumber: base &+ UInt16(truncatingIfNeeded: position), status: status, arrival: arrival)
        position += 1
        visited += 1
        return result
    }

    private mutating func loadChunk() {
        chunk = UInt16(packet.byte(at: chunkOffset)) << 8 | UInt16(packet.byte(at: chunkOffset + 1))
        chunkOffset += 2
        chunkUsed = 0
        let capacity = chunk & 0x8000 == 0 ? Int(chunk & 0x1FFF) : (chunk & 0x4000 == 0 ? 14 : 7)
        chunkLeft = min(capacity, count - position)
    }

    private mutating func readStatus(_ symbol: UInt8) -> TransportCCStatus {
        switch symbol {
        case 1:
            defer { deltaOffset += 1 }
            return .receivedSmallDelta(packet.byte(at: deltaOffset))
        case 2:
            defer { deltaOffset += 2 }
            return .receivedLargeDelta(
                Int16(bitPattern: UInt16(packet.byte(at: deltaOffset)) << 8 | UInt16(packet.byte(at: deltaOffset + 1))))
        default:
            return .notReceived
        }
    }

    /// Moves to `target` without producing: whole chunks of "not received"
    /// in O(1), received statuses by summing their deltas (bytes present).
    private mutating func skip(to target: Int) {
        while position < target {
            while chunkLeft == 0 { loadChunk() }
            if chunk & 0x8000 == 0, chunk >> 13 & 0x3 == 0 {
                let n = min(chunkLeft, target - position)
                chunkUsed += n
                chunkLeft -= n
                position += n
                continue
            }
            let symbol =
                chunk & 0x8000 == 0 ? UInt8(truncatingIfNeeded: chunk >> 13) & 0x3 : Self.vectorSymbol(chunk, chunkUsed)
            chunkUsed += 1
            chunkLeft -= 1
            if let delta = readStatus(symbol).deltaTicks { ticks &+= Int64(delta) }
            position += 1
        }
    }
}

extension TransportLayerCC {
    /// The expanded value of parsed feedback: every status in an array.
    /// Control plane and tests only (it allocates up to 65,535 entries);
    /// the media path walks `TransportCCFeedback` instead.
    package init(expanding feedback: TransportCCFeedback, packet: RawSpan) {
        var statuses: [TransportCCStatus] = []
        statuses.reserveCapacity(feedback.statusCount)
        var walker = feedback.statuses(in: packet)
        while let result = walker.next() { statuses.append(result.status) }
        self.init(
            senderSSRC: feedback.senderSSRC, mediaSSRC: feedback.mediaSSRC,
            baseSequenceNumber: feedback.baseSequenceNumber, referenceTime: feedback.referenceTime,
            feedbackPacketCount: feedback.feedbackPacketCount, statuses: statuses)
    }
}

extension TransportCCFeedback {
    /// The feedback of `bytes` when they are one transport-cc packet (a
    /// compound of one, as `TransportLayerCC.serialized()` makes), else nil.
    /// Offsets in the result are from the start of `bytes`.
    package static func parsedPacket(_ bytes: RawSpan) -> TransportCCFeedback? {
        guard let compound = try? RTCPCompoundPacket.parse(bytes), compound.packets.count == 1,
            case .transportCCFeedback(let feedback) = compound.packets[0]
        else { return nil }
        return feedback
    }
}

extension RTCPCompoundPacket {
    /// `packets` with each parsed transport-cc feedback expanded to a
    /// `TransportLayerCC` (`bytes`: what this compound was parsed from).
    /// Control plane and tests only: expansion allocates per status.
    package func expandedPackets(_ bytes: RawSpan) -> [RTCPPacket] {
        var out: [RTCPPacket] = []
        for (packet, range) in zip(packets, packetRanges) {
            if case .transportCCFeedback(let feedback) = packet {
                out.append(.transportLayerCC(TransportLayerCC(expanding: feedback, packet: bytes.extracting(range))))
            } else {
                out.append(packet)
            }
        }
        return out
    }
}
