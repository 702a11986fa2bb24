import RTP
import Wire

/// Splits H.264 access units (Annex B byte stream, `AnnexBNALUnits`) into
/// RTP packets of packetization mode 1 (RFC 6184 section 6.3, non-
/// interleaved), written into the caller's buffer one at a time with no
/// allocation. The payload of each packet is, per NAL unit in order:
///
/// - a unit that fits `maxPayloadSize` together with the units after it
///   (SPS, PPS and the small ones before an IDR slice, as libwebrtc sends
///   them): one STAP-A (section 5.7.1), header F = OR of the units' F bits,
///   NRI = their highest NRI, type 24, then per unit a 16-bit size and the
///   unit;
/// - a unit that fits alone: a single NAL unit packet (section 5.6), the
///   unit as it is;
/// - a larger unit: FU-A fragments (section 5.8) of nearly equal size,
///   each `FU indicator` (F and NRI of the unit, type 28) and `FU header`
///   (S on the first, E on the last, the unit's type), then a piece of the
///   unit after its one-byte header, which is not sent itself.
///
/// Emulation-prevention bytes stay in the units. Every packet of an access
/// unit carries its 90 kHz timestamp (section 5.1); the marker is set on
/// the last packet of the access unit.
package struct H264Packetizer: Sendable {
    let header: RTPHeaderWriter
    package let maxPayloadSize: Int
    /// The next RTP sequence number.
    package var sequenceNumber: UInt16

    /// - Parameters: `maxPayloadSize` 3...65,000 (an FU-A carries two
    ///   header bytes and at least one byte of its unit); extension IDs
    ///   1...14 and distinct; otherwise `.invalidParameter`.
    package init(
        ssrc: SSRC, payloadType: PayloadType, extensionIDs: HeaderExtensionIDs = HeaderExtensionIDs(), mid: MID? = nil,
        rid: RID? = nil, maxPayloadSize: Int = 1100, initialSequenceNumber: UInt16 = 0
    ) throws(BotMediaError) {
        guard maxPayloadSize >= 3, maxPayloadSize <= 65_000, extensionIDs.isValidForOneByteForm else {
            throw .invalidParameter
        }
        header = RTPHeaderWriter(ssrc: ssrc, payloadType: payloadType, ids: extensionIDs, mid: mid, rid: rid)
        self.maxPayloadSize = maxPayloadSize
        sequenceNumber = initialSequenceNumber
    }

    /// One RTP payload of an access unit, as ranges of the Annex B bytes.
    enum Payload: Equatable {
        case single(Range<Int>)
        /// `count` units from where `units` stands; `length` bytes in all.
        case stapA(units: AnnexBNALUnits, count: Int, length: Int, header: UInt8)
        case fuA(nalHeader: UInt8, piece: Range<Int>, isStart: Bool, isEnd: Bool)

        var length: Int {
            switch self {
            case .single(let r): r.count
            case .stapA(_, _, let length, _): length
            case .fuA(_, let piece, _, _): 2 + piece.count
            }
        }
    }

    /// Calls `body` with each payload of `stream` in order and whether it
    /// is the last; returns how many there were.
    @discardableResult
    func forEachPayload(_ stream: RawSpan, _ body: (Payload, _ isLast: Bool) -> Void) -> Int {
        var held: Payload?
        var count = 0
        func yield(_ p: Payload) {
            if let h = held { body(h, false) }
            held = p
            count += 1
        }
        var cursor = AnnexBNALUnits()
        var before = cursor
        while let unit = cursor.next(in: stream) {
            let nalHeader = stream.byte(at: unit.lowerBound)
            if unit.count > maxPayloadSize {
                let data = unit.count - 1
                let pieces = (data + maxPayloadSize - 3) / (maxPayloadSize - 2)
                let base = data / pieces
                let extra = data % pieces
                var offset = unit.lowerBound + 1
                for i in 0..<pieces {
                    let size = base + (i < extra ? 1 : 0)
                    yield(.fuA(nalHeader: nalHeader, piece: offset..<offset + size, isStart: i == 0, isEnd: i == pieces - 1))
                    offset += size
                }
                before = cursor
                continue
            }
            var length = 1 + 2 + unit.count
            var count = 1
            var forbidden = nalHeader & 0x80
            var nri = nalHeader & 0x60
            var probe = cursor
            while let next = probe.next(in: stream), length + 2 + next.count <= maxPayloadSize {
                let h = stream.byte(at: next.lowerBound)
                forbidden |= h & 0x80
                nri = max(nri, h & 0x60)
                length += 2 + next.count
                count += 1
                cursor = probe
            }
            if count > 1 {
                yield(.stapA(units: before, count: count, length: length, header: forbidden | nri | 24))
            } else {
                yield(.single(unit))
            }
            before = cursor
        }
        if let h = held { body(h, true) }
        return count
    }

    /// How many packets `accessUnit` (Annex B) takes.
    package func packetCount(accessUnit: RawSpan) -> Int { forEachPayload(accessUnit) { _, _ in } }

    /// Writes the packets of `frame` (an Annex B access unit) one after
    /// another at the start of `buffer`, calling `emit` with each packet's
    /// length before the next one overwrites it; extensions as
    /// `VP8Packetizer.packetize`. Throws `.bufferTooSmall` before emitting
    /// anything when the largest packet would not fit, and
    /// `.invalidParameter` when the frame holds no NAL unit.
    package mutating func packetize(
        _ frame: EncodedFrame, rtpTimestamp: UInt32, captureTime: UInt64?, absSendTime: UInt32? = nil,
        transportSequenceNumber: inout UInt16, into buffer: UnsafeMutableRawBufferPointer, emit: (Int) -> Void
    ) throws(BotMediaError) {
        let stream = frame.bytes.span.bytes
        var largest = 0
        let count = forEachPayload(stream) { p, _ in largest = max(largest, p.length) }
        guard count > 0 else { throw .invalidParameter }
        var values = RTPHeaderWriter.Values(
            audioLevel: nil, captureTime: captureTime, absSendTime: absSendTime,
            transportSequenceNumber: header.ids.transportWideSequenceNumber == nil ? nil : transportSequenceNumber)
        let needed = header.headerLength(values) + largest
        guard buffer.count >= needed else { throw .bufferTooSmall(needed: needed) }
        let out = MutableBytes(buffer)
        let header = header
        var sequenceNumber = sequenceNumber
        var transport = transportSequenceNumber
        forEachPayload(stream) { payload, isLast in
            if header.ids.transportWideSequenceNumber != nil {
                values.transportSequenceNumber = transport
                transport &+= 1
            }
            var offset = header.write(
                marker: isLast, sequenceNumber: sequenceNumber, timestamp: rtpTimestamp, values: values, into: out)
            switch payload {
            case .single(let unit):
                Self.copy(stream, unit, into: buffer, at: &offset)
            case .stapA(var units, let count, _, let stapHeader):
                out.store(stapHeader, at: offset)
                offset += 1
                for _ in 0..<count {
                    guard let unit = units.next(in: stream) else { break }
                    out.store(UInt16(unit.count), at: offset)
                    offset += 2
                    Self.copy(stream, unit, into: buffer, at: &offset)
                }
            case .fuA(let nalHeader, let piece, let isStart, let isEnd):
                out.store(nalHeader & 0xE0 | 28, at: offset)
                out.store((isStart ? 0x80 : 0) | (isEnd ? 0x40 : 0) | nalHeader & 0x1F, at: offset + 1)
                offset += 2
                Self.copy(stream, piece, into: buffer, at: &offset)
            }
            sequenceNumber &+= 1
            emit(offset)
        }
        self.sequenceNumber = sequenceNumber
        transportSequenceNumber = transport
    }

    private static func copy(
        _ stream: RawSpan, _ range: Range<Int>, into buffer: UnsafeMutableRawBufferPointer, at offset: inout Int
    ) {
        let start = offset
        stream.extracting(range).withUnsafeBytes { source in
            UnsafeMutableRawBufferPointer(rebasing: buffer[start..<start + source.count]).copyMemory(from: source)
        }
        offset += range.count
    }
}
