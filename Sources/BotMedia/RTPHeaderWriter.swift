import RTP
import Wire

/// Writes an RTP fixed header (RFC 3550 section 5.1, no CSRCs, no padding)
/// and a one-byte-form extension block (RFC 8285 section 4.2) straight into
/// the caller's buffer, for the packetizers. Allocates nothing. Of `ids`
/// it writes mid, rid (`rtpStreamID`; an RTX writer puts the repaired-rid
/// id there), abs-send-time, transport-wide sequence number, audio level
/// and abs-capture-time; the packetizers check them with
/// `isValidForOneByteForm`, since the one-byte form carries ids 1...14.
struct RTPHeaderWriter: Sendable {
    let ssrc: SSRC
    let payloadType: PayloadType
    let ids: HeaderExtensionIDs
    let mid: ShortToken?
    let rid: ShortToken?

    /// The per-packet values of the extensions; each is written only when
    /// both its ID is configured and the value is present.
    struct Values {
        var audioLevel: AudioLevelByte?
        var captureTime: UInt64?
        var absSendTime: UInt32?
        var transportSequenceNumber: UInt16?
    }

    /// The RFC 6464 byte, V bit included.
    struct AudioLevelByte {
        var byte: UInt8
    }

    init(ssrc: SSRC, payloadType: PayloadType, ids: HeaderExtensionIDs, mid: MID?, rid: RID?) {
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.ids = ids
        // An empty token cannot be sent in the one-byte form (length 1...16).
        self.mid = mid.flatMap { $0.token.count > 0 ? $0.token : nil }
        self.rid = rid.flatMap { $0.token.count > 0 ? $0.token : nil }
    }

    /// Header length for these values: 12 bytes, plus 4 and the padded
    /// element bytes when any element is written.
    func headerLength(_ values: Values) -> Int {
        var elements = 0
        if ids.mid != nil, let mid { elements += 1 + Int(mid.count) }
        if ids.rtpStreamID != nil, let rid { elements += 1 + Int(rid.count) }
        if ids.absoluteSendTime != nil, values.absSendTime != nil { elements += 4 }
        if ids.transportWideSequenceNumber != nil, values.transportSequenceNumber != nil { elements += 3 }
        if ids.audioLevel != nil, values.audioLevel != nil { elements += 2 }
        if ids.absoluteCaptureTime != nil, values.captureTime != nil { elements += 9 }
        guard elements > 0 else { return 12 }
        return 12 + 4 + (elements + 3) & ~3
    }

    /// Writes the header at the start of `out` (which the caller checked
    /// holds `headerLength(values)` bytes); returns its length.
    func write(marker: Bool, sequenceNumber: UInt16, timestamp: UInt32, values: Values, into out: MutableBytes) -> Int {
        let length = headerLength(values)
        out.store(UInt8(length > 12 ? 0x90 : 0x80), at: 0)
        out.store((marker ? 0x80 : 0) | payloadType.rawValue, at: 1)
        out.store(sequenceNumber, at: 2)
        out.store(timestamp, at: 4)
        out.store(ssrc.rawValue, at: 8)
        guard length > 12 else { return 12 }
        out.store(RTPHeaderExtension.oneByteProfile, at: 12)
        out.store(UInt16(truncatingIfNeeded: (length - 16) / 4), at: 14)
        var offset = 16
        if let id = ids.mid, let mid {
            Self.element(id: id, length: Int(mid.count), at: &offset, into: out)
            for i in 0..<Int(mid.count) { out.store(mid.byte(at: i), at: offset + i) }
            offset += Int(mid.count)
        }
        if let id = ids.rtpStreamID, let rid {
            Self.element(id: id, length: Int(rid.count), at: &offset, into: out)
            for i in 0..<Int(rid.count) { out.store(rid.byte(at: i), at: offset + i) }
            offset += Int(rid.count)
        }
        if let id = ids.absoluteSendTime, let value = values.absSendTime {
            Self.element(id: id, length: 3, at: &offset, into: out)
            out.store(UInt8(truncatingIfNeeded: value >> 16), at: offset)
            out.store(UInt16(truncatingIfNeeded: value), at: offset + 1)
            offset += 3
        }
        if let id = ids.transportWideSequenceNumber, let value = values.transportSequenceNumber {
            Self.element(id: id, length: 2, at: &offset, into: out)
            out.store(value, at: offset)
            offset += 2
        }
        if let id = ids.audioLevel, let value = values.audioLevel {
            Self.element(id: id, length: 1, at: &offset, into: out)
            out.store(value.byte, at: offset)
            offset += 1
        }
        if let id = ids.absoluteCaptureTime, let value = values.captureTime {
            Self.element(id: id, length: 8, at: &offset, into: out)
            out.store(UInt32(truncatingIfNeeded: value >> 32), at: offset)
            out.store(UInt32(truncatingIfNeeded: value), at: offset + 4)
            offset += 8
        }
        while offset < length {
            out.store(UInt8(0), at: offset)
            offset += 1
        }
        return length
    }

    /// The one-byte element header: ID in the high nibble, length - 1 low.
    private static func element(id: UInt8, length: Int, at offset: inout Int, into out: MutableBytes) {
        out.store(id << 4 | UInt8(truncatingIfNeeded: length - 1), at: offset)
        offset += 1
    }
}
