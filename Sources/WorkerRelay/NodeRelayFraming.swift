/// `RelayMessage`s between two nodes of a cluster (issue #15, the
/// cascade; docs/CLUSTER.md), carried by the pair's DTLS-SRTP relay
/// transport instead of a ring between two workers. The same messages,
/// wrapped so that SRTP and SRTCP protect them:
///
/// - Media goes as RTP (RFC 3550 section 5.1) with one SSRC per link
///   direction and its own sequence numbers, so SRTP's replay window and
///   index work as for any stream: version 2, no padding, no extension,
///   no CSRC, marker 0, payload type `mediaPayloadType`, the link's
///   sequence number, timestamp 0, the link's SSRC; the payload is the
///   `RelayMessage` (its 8-byte header, then the publisher's RTP packet
///   as it arrived, byte for byte).
/// - Sender reports, layer bitrates and feedback go as one RTCP APP packet (RFC 3550
///   section 6.7, packet type 204, name `SWLT`), alone (RFC 5506
///   reduced-size RTCP: both ends are ours): the subtype holds how many
///   zero bytes pad the message to a 32-bit boundary, the application
///   data is the `RelayMessage`.
///
/// Both ends are Swiftlet nodes, but what arrives is parsed as untrusted
/// bytes: a bad packet is a typed error that costs that packet.
package enum NodeRelayFraming {
    /// A payload type from the dynamic range (RFC 3551 section 6) that no
    /// SDP on the relay negotiates (there is none).
    package static let mediaPayloadType: UInt8 = 118
    /// RTCP APP (RFC 3550 section 12.1).
    static let appPacketType: UInt8 = 204
    /// The APP packet's name (four ASCII characters, section 6.7).
    package static let appName: [UInt8] = Array("SWLT".utf8)
    static let rtpHeaderSize = 12
    static let appHeaderSize = 12

    /// Bytes a media packet of `packetBytes` takes on the wire before SRTP.
    package static func mediaSize(packetBytes: Int) -> Int {
        rtpHeaderSize + RelayMessage.headerSize + packetBytes
    }

    /// Writes relay media into `buffer`; the length, or nil when it does
    /// not fit or the message is not valid (empty packet, layer out of
    /// range).
    package static func encodeMedia(
        _ track: RelayTrackID, layer: Int, isRetransmission: Bool, packet: UnsafeRawBufferPointer,
        sequenceNumber: UInt16, ssrc: UInt32, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int? {
        guard buffer.count >= rtpHeaderSize + RelayMessage.headerSize + 1 else { return nil }
        buffer[0] = 0x80
        buffer[1] = mediaPayloadType
        store16(sequenceNumber, buffer, 2)
        store32(0, buffer, 4)
        store32(ssrc, buffer, 8)
        guard
            let n = RelayMessage.encodeMedia(
                track, layer: layer, isRetransmission: isRetransmission, packet: packet,
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[rtpHeaderSize...]))
        else { return nil }
        return rtpHeaderSize + n
    }

    /// Writes a sender report as an RTCP APP packet into `buffer`.
    package static func encodeSenderReport(
        _ track: RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32, ssrc: UInt32,
        into buffer: UnsafeMutableRawBufferPointer
    ) -> Int? {
        wrapApp(ssrc: ssrc, into: buffer) { body in
            RelayMessage.encodeSenderReport(track, layer: layer, ntp: ntp, rtpTimestamp: rtpTimestamp, into: body)
        }
    }

    /// Writes a track's layer bitrates as an RTCP APP packet into `buffer`.
    package static func encodeLayerBitrates(
        _ track: RelayTrackID, _ rates: RelayedLayerBitrates, ssrc: UInt32, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int? {
        wrapApp(ssrc: ssrc, into: buffer) { body in RelayMessage.encodeLayerBitrates(track, rates, into: body) }
    }

    /// Writes feedback as an RTCP APP packet into `buffer`.
    package static func encodeFeedback(
        _ feedback: RelayFeedback, ssrc: UInt32, into buffer: UnsafeMutableRawBufferPointer
    )
        -> Int?
    {
        wrapApp(ssrc: ssrc, into: buffer) { body in RelayMessage.encodeFeedback(feedback, into: body) }
    }

    /// Why a packet on a relay transport is not a relay message.
    package enum DecodeError: Error, Equatable, Sendable {
        case truncated
        /// Not version 2, or RTP with padding, an extension or CSRCs.
        case badHeader
        case unexpectedPayloadType(UInt8)
        /// RTCP that is not one APP packet named `SWLT` filling the datagram.
        case notRelayControl
        case badPadding
        case message(RelayMessageError)
    }

    /// A decrypted RTP packet of a relay transport: its relay message
    /// (media points into `packet`).
    package static func decodeMedia(_ packet: UnsafeRawBufferPointer) throws(DecodeError) -> RelayMessage {
        guard packet.count > rtpHeaderSize else { throw .truncated }
        // Version 2; no padding, extension or CSRC: we never write them.
        guard packet[0] == 0x80 else { throw .badHeader }
        guard packet[1] & 0x7F == mediaPayloadType else { throw .unexpectedPayloadType(packet[1] & 0x7F) }
        let message: RelayMessage
        do {
            message = try RelayMessage.decode(UnsafeRawBufferPointer(rebasing: packet[rtpHeaderSize...]))
        } catch { throw .message(error) }
        guard case .media = message else { throw .notRelayControl }
        return message
    }

    /// A decrypted RTCP packet of a relay transport: its sender report or
    /// feedback.
    package static func decodeControl(_ packet: UnsafeRawBufferPointer) throws(DecodeError) -> RelayMessage {
        guard packet.count >= appHeaderSize + RelayMessage.headerSize else { throw .truncated }
        // Version 2, no padding bit (our padding count is the subtype).
        guard packet[0] & 0xE0 == 0x80 else { throw .badHeader }
        guard packet[1] == appPacketType, packet[8] == appName[0], packet[9] == appName[1], packet[10] == appName[2],
            packet[11] == appName[3]
        else { throw .notRelayControl }
        // Length in 32-bit words minus one (section 6.4.1): exactly this
        // datagram, so a second packet cannot hide behind it.
        let words = Int(packet[2]) << 8 | Int(packet[3])
        guard (words + 1) * 4 == packet.count else { throw .notRelayControl }
        let padding = Int(packet[0] & 0x1F)
        guard padding < 4, packet.count - padding >= appHeaderSize + RelayMessage.headerSize else { throw .badPadding }
        for i in (packet.count - padding)..<packet.count where packet[i] != 0 { throw .badPadding }
        let message: RelayMessage
        do {
            message = try RelayMessage.decode(
                UnsafeRawBufferPointer(rebasing: packet[appHeaderSize..<(packet.count - padding)]))
        } catch { throw .message(error) }
        if case .media = message { throw .notRelayControl }
        return message
    }

    private static func wrapApp(
        ssrc: UInt32, into buffer: UnsafeMutableRawBufferPointer, _ body: (UnsafeMutableRawBufferPointer) -> Int?
    ) -> Int? {
        guard buffer.count > appHeaderSize, let n = body(UnsafeMutableRawBufferPointer(rebasing: buffer[appHeaderSize...]))
        else { return nil }
        let padding = (4 - n % 4) % 4
        let total = appHeaderSize + n + padding
        guard total <= buffer.count else { return nil }
        for i in (appHeaderSize + n)..<total { buffer[i] = 0 }
        buffer[0] = 0x80 | UInt8(padding)
        buffer[1] = appPacketType
        store16(UInt16(total / 4 - 1), buffer, 2)
        store32(ssrc, buffer, 4)
        for i in 0..<4 { buffer[8 + i] = appName[i] }
        return total
    }

    private static func store16(_ v: UInt16, _ b: UnsafeMutableRawBufferPointer, _ at: Int) {
        b[at] = UInt8(v >> 8)
        b[at + 1] = UInt8(v & 0xFF)
    }

    private static func store32(_ v: UInt32, _ b: UnsafeMutableRawBufferPointer, _ at: Int) {
        for i in 0..<4 { b[at + i] = UInt8((v >> (24 - 8 * UInt32(i))) & 0xFF) }
    }
}
