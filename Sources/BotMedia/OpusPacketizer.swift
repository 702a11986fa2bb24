import RTP
import Wire

/// Puts Opus frames into RTP packets (RFC 7587): one frame per packet, the
/// payload is the Opus packet unchanged (section 4.2), timestamps on the
/// 48 kHz clock whatever the coded bandwidth (section 4.1). Writes into the
/// caller's buffer with no allocation.
///
/// Frames with `shouldSend == false` (DTX frames after the first of a
/// silence period) produce no packet and consume no sequence number. The
/// first packet after such a gap, and the very first packet, carry the
/// marker bit: the start of a talkspurt (RFC 3551 section 4.1, RFC 7587
/// section 4.2 refers to it for DTX).
///
/// With the audio-level extension negotiated, each packet carries the
/// frame's RFC 6464 level, with the V bit set unless libopus marked the
/// frame as DTX silence.
package struct OpusPacketizer: Sendable {
    let header: RTPHeaderWriter
    /// The next RTP sequence number.
    package var sequenceNumber: UInt16
    /// Whether the previous frame was sent; false at start, so the first
    /// packet carries the marker.
    var previousWasSent = false

    package init(
        ssrc: SSRC, payloadType: PayloadType, extensionIDs: HeaderExtensionIDs = HeaderExtensionIDs(), mid: MID? = nil,
        initialSequenceNumber: UInt16 = 0
    ) throws(BotMediaError) {
        guard extensionIDs.isValidForOneByteForm else { throw .invalidParameter }
        header = RTPHeaderWriter(ssrc: ssrc, payloadType: payloadType, ids: extensionIDs, mid: mid, rid: nil)
        sequenceNumber = initialSequenceNumber
    }

    /// Writes the packet for `frame` at the start of `buffer` and calls
    /// `emit` with its length, or does nothing for a frame not to send.
    /// Returns the number of packets written (0 or 1).
    @discardableResult
    package mutating func packetize(
        _ frame: EncodedFrame, rtpTimestamp: UInt32, captureTime: UInt64? = nil, absSendTime: UInt32? = nil,
        transportSequenceNumber: inout UInt16, into buffer: UnsafeMutableRawBufferPointer, emit: (Int) -> Void
    ) throws(BotMediaError) -> Int {
        guard frame.shouldSend else {
            previousWasSent = false
            return 0
        }
        guard !frame.bytes.isEmpty else { throw .invalidParameter }
        let level = RTPHeaderWriter.AudioLevelByte(
            byte: (frame.isDTXSilence ? 0 : 0x80) | (frame.audioLevel & 0x7F))
        let values = RTPHeaderWriter.Values(
            audioLevel: level, captureTime: captureTime, absSendTime: absSendTime,
            transportSequenceNumber: header.ids.transportWideSequenceNumber == nil ? nil : transportSequenceNumber)
        let headerLength = header.headerLength(values)
        let needed = headerLength + frame.bytes.count
        guard buffer.count >= needed else { throw .bufferTooSmall(needed: needed) }
        if header.ids.transportWideSequenceNumber != nil { transportSequenceNumber &+= 1 }
        let offset = header.write(
            marker: !previousWasSent, sequenceNumber: sequenceNumber, timestamp: rtpTimestamp, values: values,
            into: MutableBytes(buffer))
        frame.bytes.withUnsafeBytes { source in
            UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + source.count]).copyMemory(from: source)
        }
        sequenceNumber &+= 1
        previousWasSent = true
        emit(needed)
        return 1
    }
}
