import Wire

/// One generic NACK FCI entry (RFC 4585 section 6.2.1): the packet ID
/// (PID) of a lost packet and a bitmask of following lost packets (BLP),
/// where bit i (least significant first) reports PID + i + 1 lost.
package struct NACKPair: Equatable, Hashable, Sendable {
    package var packetID: UInt16
    package var lostPackets: UInt16

    package init(packetID: UInt16, lostPackets: UInt16 = 0) {
        self.packetID = packetID
        self.lostPackets = lostPackets
    }

    /// The sequence numbers this entry reports lost, PID first, in order
    /// (wrapping past 65535).
    package var lostSequenceNumbers: [UInt16] {
        var out = [packetID]
        for bit in 0..<16 where lostPackets & (1 << bit) != 0 {
            out.append(packetID &+ UInt16(bit + 1))
        }
        return out
    }
}

/// Generic NACK: RTPFB (205) with FMT 1 (RFC 4585 section 6.2.1).
///
///     |V=2|P| FMT=1   |   PT=205      |          length               |
///     |                  SSRC of packet sender                        |
///     |                  SSRC of media source                         |
///     |            PID                |             BLP               |
///     :                  (more PID/BLP pairs)                         :
///
/// A NACK carries at least one pair; one with none is rejected.
package struct TransportLayerNACK: Equatable, Sendable {
    package static let format: UInt8 = 1

    package var senderSSRC: SSRC
    package var mediaSSRC: SSRC
    package var pairs: [NACKPair]

    package init(senderSSRC: SSRC, mediaSSRC: SSRC, pairs: [NACKPair]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.pairs = pairs
    }

    /// A NACK for exactly `lost`, with the fewest pairs.
    package init(senderSSRC: SSRC, mediaSSRC: SSRC, lostSequenceNumbers lost: some Sequence<UInt16>) {
        self.init(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, pairs: Self.pairs(covering: lost))
    }

    /// Every sequence number the pairs report lost, in pair order.
    package var lostSequenceNumbers: [UInt16] { pairs.flatMap(\.lostSequenceNumbers) }

    /// The minimal list of PID/BLP pairs that reports exactly the given
    /// sequence numbers lost.
    ///
    /// The numbers are ordered around the 16-bit circle starting just after
    /// the widest gap between neighbours, so a set that spans the wrap
    /// (65534, 65535, 0, 1) is one run. Then each pair takes the lowest
    /// uncovered number as PID and the next 16 as BLP bits; this greedy
    /// cover is optimal for fixed-width windows on a line.
    package static func pairs(covering lost: some Sequence<UInt16>) -> [NACKPair] {
        let sorted = Array(Set(lost)).sorted()
        guard let first = sorted.first, let last = sorted.last else { return [] }
        // Find the widest circular gap; start after it.
        var startIndex = 0
        var widest = Int(first) + 65536 - Int(last)
        for i in sorted.indices.dropFirst() {
            let gap = Int(sorted[i]) - Int(sorted[i - 1])
            if gap > widest {
                widest = gap
                startIndex = i
            }
        }
        let ordered = sorted[startIndex...] + sorted[..<startIndex]
        var pairs: [NACKPair] = []
        var current: NACKPair?
        for seq in ordered {
            if var pair = current {
                let distance = seq &- pair.packetID
                if distance >= 1, distance <= 16 {
                    pair.lostPackets |= 1 << (distance - 1)
                    current = pair
                    continue
                }
                pairs.append(pair)
            }
            current = NACKPair(packetID: seq)
        }
        if let current { pairs.append(current) }
        return pairs
    }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> TransportLayerNACK {
        let sender = try reader.ssrc(or: .truncated)
        let media = try reader.ssrc(or: .truncated)
        let count = reader.remaining / 4
        guard count > 0 else { throw .missingFCI }
        var pairs: [NACKPair] = []
        pairs.reserveCapacity(count)
        for _ in 0..<count {
            pairs.append(
                NACKPair(
                    packetID: try reader.uint16(or: RTCPParseError.truncated),
                    lostPackets: try reader.uint16(or: RTCPParseError.truncated)))
        }
        return TransportLayerNACK(senderSSRC: sender, mediaSSRC: media, pairs: pairs)
    }

    package func serialize(into writer: inout ByteWriter) {
        writer.rtcpPacket(count: Self.format, packetType: RTCPPacketType.transportFeedback) { w in
            w.uint32(senderSSRC.rawValue)
            w.uint32(mediaSSRC.rawValue)
            for pair in pairs {
                w.uint16(pair.packetID)
                w.uint16(pair.lostPackets)
            }
        }
    }

    package func serialized() -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer)
        return writer.bytes
    }
}
