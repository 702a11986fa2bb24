import RTP
import Wire

/// Splits VP8 frames into RTP packets (RFC 7741) written into the caller's
/// buffer, one packet at a time, with no allocation.
///
/// Every packet carries the 6-byte payload descriptor of RFC 7741 section
/// 4.2 with X, I (15-bit picture ID, M set), L (TL0PICIDX) and T (TID, Y):
///
///     |X=1|R|N=0|S|R|PID=0|  |I=1|L=1|T=1|K=0|RSV|  |M=1| PictureID (15) |
///     |   TL0PICIDX   |  |TID|Y| KEYIDX=0 |
///
/// S is set on the first packet of a frame only (the frame is not split at
/// partition boundaries, so PID is always 0, section 4.4); the RTP marker
/// is set on the last packet (section 4.1). The picture ID advances by one
/// per frame (mod 2^15); TL0PICIDX advances on every base-layer frame and
/// upper-layer frames repeat the value of the base frame they follow
/// (section 4.2). The frame is split into packets of nearly equal size, at
/// most `maxPayloadSize` bytes of RTP payload each.
package struct VP8Packetizer: Sendable {
    package static let descriptorLength = 6

    let header: RTPHeaderWriter
    package let maxPayloadSize: Int
    /// The next RTP sequence number.
    package var sequenceNumber: UInt16
    /// The next frame's picture ID, 15 bits.
    package var pictureID: UInt16
    /// The last TL0PICIDX written.
    package var tl0PictureIndex: UInt8

    /// - Parameters: `maxPayloadSize` at least 7 (descriptor plus one byte);
    ///   extension IDs 1...14 and distinct; otherwise `.invalidParameter`.
    package init(
        ssrc: SSRC, payloadType: PayloadType, extensionIDs: HeaderExtensionIDs = HeaderExtensionIDs(), mid: MID? = nil,
        rid: RID? = nil, maxPayloadSize: Int = 1100, initialSequenceNumber: UInt16 = 0, initialPictureID: UInt16 = 0,
        initialTL0PictureIndex: UInt8 = 0
    ) throws(BotMediaError) {
        guard maxPayloadSize > Self.descriptorLength, maxPayloadSize <= 65_000, extensionIDs.isValidForOneByteForm else {
            throw .invalidParameter
        }
        header = RTPHeaderWriter(ssrc: ssrc, payloadType: payloadType, ids: extensionIDs, mid: mid, rid: rid)
        self.maxPayloadSize = maxPayloadSize
        sequenceNumber = initialSequenceNumber
        pictureID = initialPictureID & 0x7FFF
        tl0PictureIndex = initialTL0PictureIndex &- 1
    }

    /// How many packets `frameLength` bytes of VP8 take.
    package func packetCount(frameLength: Int) -> Int {
        let capacity = maxPayloadSize - Self.descriptorLength
        return max(1, (frameLength + capacity - 1) / capacity)
    }

    /// Writes the packets of `frame` one after another at the start of
    /// `buffer`, calling `emit` with each packet's length before the next
    /// one overwrites it. `captureTime` (NTP UQ32.32) and `absSendTime`
    /// (24 bits) go into their extensions when negotiated; when the
    /// transport-wide sequence number is negotiated each packet takes
    /// `transportSequenceNumber` and increments it.
    ///
    /// Throws `.bufferTooSmall` before emitting anything when the largest
    /// packet would not fit, and `.invalidParameter` for an empty frame.
    package mutating func packetize(
        _ frame: EncodedFrame, rtpTimestamp: UInt32, captureTime: UInt64?, absSendTime: UInt32? = nil,
        transportSequenceNumber: inout UInt16, into buffer: UnsafeMutableRawBufferPointer, emit: (Int) -> Void
    ) throws(BotMediaError) {
        let length = frame.bytes.count
        guard length > 0 else { throw .invalidParameter }
        let count = packetCount(frameLength: length)
        let base = length / count
        let extra = length % count
        var values = RTPHeaderWriter.Values(
            audioLevel: nil, captureTime: captureTime, absSendTime: absSendTime,
            transportSequenceNumber: header.ids.transportWideSequenceNumber == nil ? nil : transportSequenceNumber)
        let headerLength = header.headerLength(values)
        let needed = headerLength + Self.descriptorLength + base + (extra > 0 ? 1 : 0)
        guard buffer.count >= needed else { throw .bufferTooSmall(needed: needed) }

        if frame.temporalLayer == 0 { tl0PictureIndex &+= 1 }
        let out = MutableBytes(buffer)
        let tidByte = (frame.temporalLayer & 0x03) << 6 | (frame.layerSync ? 0x20 : 0)
        frame.bytes.withUnsafeBytes { source in
            var sourceOffset = 0
            for index in 0..<count {
                let chunk = base + (index < extra ? 1 : 0)
                if header.ids.transportWideSequenceNumber != nil {
                    values.transportSequenceNumber = transportSequenceNumber
                    transportSequenceNumber &+= 1
                }
                var offset = header.write(
                    marker: index == count - 1, sequenceNumber: sequenceNumber, timestamp: rtpTimestamp, values: values,
                    into: out)
                out.store(UInt8(index == 0 ? 0x90 : 0x80), at: offset)
                out.store(UInt8(0xE0), at: offset + 1)
                out.store(0x8000 | pictureID, at: offset + 2)
                out.store(tl0PictureIndex, at: offset + 4)
                out.store(tidByte, at: offset + 5)
                offset += Self.descriptorLength
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + chunk])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[sourceOffset..<sourceOffset + chunk]))
                sourceOffset += chunk
                sequenceNumber &+= 1
                emit(offset + chunk)
            }
        }
        pictureID = (pictureID &+ 1) & 0x7FFF
    }
}
