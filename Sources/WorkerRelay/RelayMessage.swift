/// One message between two media workers, as written into a `PacketRing`
/// slot (docs/ARCHITECTURE.md, "Rooms over every worker"). Both ends are
/// the same process, but the slot is still parsed as untrusted bytes: a
/// bad slot is a typed error that costs that message, never a trap.
///
/// Layout (little-endian), an 8-byte header then a body:
///
///     0      kind: 1 media, 2 sender report, 3 keyframe request, 4 NACK,
///            5 layer demand, 6 layer bitrates
///     1      flags: bit 0 retransmission (media only); other bits zero
///     2      layer (0 ..< maxLayers; zero for layer demand)
///     3      zero
///     4..<8  RelayTrackID
///     8...   body: media, the RTP packet (1 byte or more, the rest of the
///            slot); sender report, NTP time (8) and RTP timestamp (4);
///            keyframe request, nothing; NACK, packet id (2) and bitmask
///            (2); layer demand, the layer bits (1); layer bitrates,
///            `RelayedLayerBitrates.count` rates (4 each, bits per second,
///            spatial-major).
///
/// The message's end is the slot's used length, so a body has no length
/// field of its own and fixed-size bodies must match it exactly.
///
/// A media case's `packet` points into the slot: valid only while the
/// slot is being read.
package enum RelayMessage {
    case media(RelayTrackID, layer: Int, isRetransmission: Bool, packet: UnsafeRawBufferPointer)
    case senderReport(RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32)
    /// The source's measure of every layer of the track, about once a
    /// second: source to far side, like media.
    case layerBitrates(RelayTrackID, RelayedLayerBitrates)
    case feedback(RelayFeedback)

    /// Spatial layers a relayed track may have: layer demand is a byte of
    /// layer bits (RelayFeedback.layerDemand), and simulcast sends three.
    package static let maxLayers = 8
    package static let headerSize = 8

    enum Kind: UInt8 {
        case media = 1, senderReport, keyframeRequest, nack, layerDemand, layerBitrates
    }
    static let layerBitratesBodySize = RelayedLayerBitrates.count * 4
    static let retransmissionFlag: UInt8 = 0x01
}

/// Why a slot is not a relay message.
package enum RelayMessageError: Error, Equatable {
    /// Fewer bytes than the header.
    case truncated
    case unknownKind(UInt8)
    /// Flag bits other than retransmission, or retransmission on a
    /// message that is not media, or a nonzero reserved byte.
    case badFlags
    case layerOutOfRange(UInt8)
    /// The body's size does not fit the kind (an empty packet, a sender
    /// report of the wrong size, ...).
    case badBodyLength(kind: UInt8, length: Int)
}

extension RelayMessage {
    /// Parses a slot; `packet` of a media message points into `slot`.
    package static func decode(_ slot: UnsafeRawBufferPointer) throws(RelayMessageError) -> RelayMessage {
        guard slot.count >= headerSize else { throw .truncated }
        let rawKind = slot[0]
        guard let kind = Kind(rawValue: rawKind) else { throw .unknownKind(rawKind) }
        let flags = slot[1]
        guard slot[3] == 0, flags & ~retransmissionFlag == 0, kind == .media || flags == 0 else { throw .badFlags }
        guard slot[2] < maxLayers, (kind != .layerDemand && kind != .layerBitrates) || slot[2] == 0 else {
            throw .layerOutOfRange(slot[2])
        }
        let layer = Int(slot[2])
        let track = RelayTrackID(load(UInt32.self, slot, 4))
        let length = slot.count - headerSize
        switch kind {
        case .media:
            guard length >= 1 else { throw .badBodyLength(kind: rawKind, length: length) }
            return .media(
                track, layer: layer, isRetransmission: flags & retransmissionFlag != 0,
                packet: UnsafeRawBufferPointer(rebasing: slot[headerSize...]))
        case .senderReport:
            guard length == 12 else { throw .badBodyLength(kind: rawKind, length: length) }
            return .senderReport(track, layer: layer, ntp: load(UInt64.self, slot, 8), rtpTimestamp: load(UInt32.self, slot, 16))
        case .keyframeRequest:
            guard length == 0 else { throw .badBodyLength(kind: rawKind, length: length) }
            return .feedback(.keyframeRequest(track, layer: layer))
        case .nack:
            guard length == 4 else { throw .badBodyLength(kind: rawKind, length: length) }
            return .feedback(
                .nack(track, layer: layer, packetID: load(UInt16.self, slot, 8), lostBitmask: load(UInt16.self, slot, 10)))
        case .layerDemand:
            guard length == 1 else { throw .badBodyLength(kind: rawKind, length: length) }
            return .feedback(.layerDemand(track, layers: slot[8]))
        case .layerBitrates:
            guard length == layerBitratesBodySize else { throw .badBodyLength(kind: rawKind, length: length) }
            var rates = RelayedLayerBitrates()
            for s in 0..<RelayedLayerBitrates.spatialLayers {
                for t in 0..<RelayedLayerBitrates.temporalLayers {
                    rates[s, t] = load(UInt32.self, slot, headerSize + (s * RelayedLayerBitrates.temporalLayers + t) * 4)
                }
            }
            return .layerBitrates(track, rates)
        }
    }

    /// Writes a media message into `slot`; nil (nothing meaningful
    /// written) when the packet is empty or does not fit, or the layer is
    /// out of range.
    @inline(__always)
    package static func encodeMedia(
        _ track: RelayTrackID, layer: Int, isRetransmission: Bool, packet: UnsafeRawBufferPointer,
        into slot: UnsafeMutableRawBufferPointer
    ) -> Int? {
        guard !packet.isEmpty, packet.count <= slot.count - headerSize, let base = slot.baseAddress,
            let source = packet.baseAddress,
            writeHeader(.media, flags: isRetransmission ? retransmissionFlag : 0, layer: layer, track: track, slot)
        else { return nil }
        (base + headerSize).copyMemory(from: source, byteCount: packet.count)
        return headerSize + packet.count
    }

    package static func encodeSenderReport(
        _ track: RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32, into slot: UnsafeMutableRawBufferPointer
    ) -> Int? {
        guard slot.count >= headerSize + 12, writeHeader(.senderReport, flags: 0, layer: layer, track: track, slot) else {
            return nil
        }
        store(ntp, slot, 8)
        store(rtpTimestamp, slot, 16)
        return headerSize + 12
    }

    package static func encodeLayerBitrates(
        _ track: RelayTrackID, _ rates: RelayedLayerBitrates, into slot: UnsafeMutableRawBufferPointer
    ) -> Int? {
        guard slot.count >= headerSize + layerBitratesBodySize,
            writeHeader(.layerBitrates, flags: 0, layer: 0, track: track, slot)
        else { return nil }
        for s in 0..<RelayedLayerBitrates.spatialLayers {
            for t in 0..<RelayedLayerBitrates.temporalLayers {
                store(rates[s, t], slot, headerSize + (s * RelayedLayerBitrates.temporalLayers + t) * 4)
            }
        }
        return headerSize + layerBitratesBodySize
    }

    package static func encodeFeedback(_ feedback: RelayFeedback, into slot: UnsafeMutableRawBufferPointer) -> Int? {
        switch feedback {
        case .keyframeRequest(let track, let layer):
            guard writeHeader(.keyframeRequest, flags: 0, layer: layer, track: track, slot) else { return nil }
            return headerSize
        case .nack(let track, let layer, let packetID, let bitmask):
            guard slot.count >= headerSize + 4, writeHeader(.nack, flags: 0, layer: layer, track: track, slot) else {
                return nil
            }
            store(packetID, slot, 8)
            store(bitmask, slot, 10)
            return headerSize + 4
        case .layerDemand(let track, let layers):
            guard slot.count >= headerSize + 1, writeHeader(.layerDemand, flags: 0, layer: 0, track: track, slot) else {
                return nil
            }
            slot[8] = layers
            return headerSize + 1
        }
    }

    /// The slot size a ring needs to carry packets of up to `bytes` bytes
    /// (and every other message).
    package static func slotSize(forPacketsUpTo bytes: Int) -> Int { headerSize + max(bytes, layerBitratesBodySize) }

    @inline(__always)
    private static func writeHeader(
        _ kind: Kind, flags: UInt8, layer: Int, track: RelayTrackID, _ slot: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard slot.count >= headerSize, layer >= 0, layer < maxLayers else { return false }
        slot[0] = kind.rawValue
        slot[1] = flags
        slot[2] = UInt8(layer)
        slot[3] = 0
        store(track.rawValue, slot, 4)
        return true
    }

    @inline(__always)
    private static func load<T: FixedWidthInteger>(_: T.Type, _ slot: UnsafeRawBufferPointer, _ offset: Int) -> T {
        T(littleEndian: slot.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    @inline(__always)
    private static func store<T: FixedWidthInteger>(_ value: T, _ slot: UnsafeMutableRawBufferPointer, _ offset: Int) {
        slot.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }
}
