import Wire

/// One packet of a compound as `RTCPCompoundView` hands it out. The lists
/// read the compound's bytes and are valid only during the call that
/// received them (the router's decrypted receive slot).
package enum RTCPPacketView {
    /// SR (RFC 3550 section 6.4.1).
    case senderReport(ssrc: SSRC, senderInfo: SenderInfo, reports: ReceptionReportBlocks)
    /// RR (RFC 3550 section 6.4.2).
    case receiverReport(ssrc: SSRC, reports: ReceptionReportBlocks)
    /// Generic NACK (RFC 4585 section 6.2.1).
    case transportLayerNACK(senderSSRC: SSRC, mediaSSRC: SSRC, pairs: NACKPairs)
    /// Transport-cc feedback, validated; `packet` is its range in the
    /// compound (header through padding), for `TransportCCStatusWalker`.
    case transportCCFeedback(TransportCCFeedback, packet: Range<Int>)
    case pictureLossIndication(PictureLossIndication)
    /// FIR (RFC 5104 section 4.3.1).
    case fullIntraRequest(senderSSRC: SSRC, mediaSSRC: SSRC, entries: FIREntries)
    /// REMB without its SSRC list (`ssrcs` is empty: checked, not read).
    case receiverEstimatedMaximumBitrate(ReceiverEstimatedMaximumBitrate)
    /// SDES, BYE, APP and unknown types or formats: validated, not read.
    case other(packetType: UInt8, count: UInt8)

    @inline(__always)
    static func uint32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}

/// The report blocks of an SR or RR, read in place (24 bytes each,
/// RFC 3550 section 6.4.1).
package struct ReceptionReportBlocks: RandomAccessCollection {
    private let bytes: UnsafeRawBufferPointer
    private let offset: Int
    package let count: Int
    init(_ bytes: UnsafeRawBufferPointer, offset: Int, count: Int) {
        self.bytes = bytes
        self.offset = offset
        self.count = count
    }
    package var startIndex: Int { 0 }
    package var endIndex: Int { count }
    package subscript(index: Int) -> ReceptionReport {
        precondition(index >= 0 && index < count)
        let o = offset + index * ReceptionReport.byteCount
        let word = RTCPPacketView.uint32(bytes, o + 4)
        return ReceptionReport(
            ssrc: SSRC(RTCPPacketView.uint32(bytes, o)), fractionLost: UInt8(word >> 24),
            // Sign-extend the 24-bit cumulative count.
            cumulativeLost: Int32(bitPattern: word << 8) >> 8,
            extendedHighestSequenceNumber: RTCPPacketView.uint32(bytes, o + 8),
            jitter: RTCPPacketView.uint32(bytes, o + 12), lastSenderReport: RTCPPacketView.uint32(bytes, o + 16),
            delaySinceLastSenderReport: RTCPPacketView.uint32(bytes, o + 20))
    }
}

/// The PID/BLP pairs of a generic NACK, read in place (RFC 4585 section
/// 6.2.1).
package struct NACKPairs: RandomAccessCollection {
    private let bytes: UnsafeRawBufferPointer
    private let offset: Int
    package let count: Int
    init(_ bytes: UnsafeRawBufferPointer, offset: Int, count: Int) {
        self.bytes = bytes
        self.offset = offset
        self.count = count
    }
    package var startIndex: Int { 0 }
    package var endIndex: Int { count }
    package subscript(index: Int) -> NACKPair {
        precondition(index >= 0 && index < count)
        let word = RTCPPacketView.uint32(bytes, offset + index * 4)
        return NACKPair(packetID: UInt16(word >> 16), lostPackets: UInt16(truncatingIfNeeded: word))
    }
}

/// The FCI entries of a FIR, read in place (RFC 5104 section 4.3.1.1:
/// SSRC, sequence number, 3 reserved bytes).
package struct FIREntries: RandomAccessCollection {
    private let bytes: UnsafeRawBufferPointer
    private let offset: Int
    package let count: Int
    init(_ bytes: UnsafeRawBufferPointer, offset: Int, count: Int) {
        self.bytes = bytes
        self.offset = offset
        self.count = count
    }
    package var startIndex: Int { 0 }
    package var endIndex: Int { count }
    package subscript(index: Int) -> FIREntry {
        precondition(index >= 0 && index < count)
        let o = offset + index * 8
        return FIREntry(
            ssrc: SSRC(RTCPPacketView.uint32(bytes, o)), sequenceNumber: UInt8(RTCPPacketView.uint32(bytes, o + 4) >> 24))
    }
}
