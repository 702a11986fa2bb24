import Codecs
import RTP
import Wire

/// Why a forwarder did not forward a packet.
package enum DropReason: Equatable, Sendable {
    /// The caller (layer selector) chose not to forward it, e.g. a temporal
    /// layer above the target.
    case notForwarded
    /// No payload: padding only (bandwidth probes); not numbered.
    case paddingOnly
    /// From an SSRC other than the current source, and not a switch point.
    case notCurrentSource
    /// The current source's, but older than the packet it was switched on.
    case beforeSourceSwitch
    /// A sequence number already seen.
    case duplicate
    /// So late that its place among the numbers handed out is forgotten.
    case outsideHistory
}

/// The header values a forwarded packet gets for one subscriber.
package struct RTPRewrite: Equatable, Sendable {
    package var ssrc: SSRC
    package var sequenceNumber: UInt16
    package var timestamp: UInt32
    /// The outgoing VP8 picture ID (15-bit counter; a 7-bit field gets its
    /// low 7 bits), when the packet carries one.
    package var pictureID: UInt16?
    /// The outgoing VP8 TL0PICIDX, when the packet carries one.
    package var tl0PictureIndex: UInt8?

    package init(
        ssrc: SSRC, sequenceNumber: UInt16, timestamp: UInt32, pictureID: UInt16? = nil, tl0PictureIndex: UInt8? = nil
    ) {
        self.ssrc = ssrc
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.pictureID = pictureID
        self.tl0PictureIndex = tl0PictureIndex
    }

    /// Writes these values into `packet` in place: SSRC, sequence number and
    /// timestamp with `RTPHeaderRewriter`, and the VP8 picture ID and
    /// TL0PICIDX when both this rewrite and `vp8` (parsed from the same
    /// packet's payload) have them. `header` is the packet's parsed header.
    /// Returns false if any write did not fit (the buffer may then be
    /// partly rewritten: drop the packet).
    @discardableResult
    package func apply(to packet: MutableBytes, header: RTPHeader, vp8: VP8PayloadDescriptor? = nil) -> Bool {
        var ok = RTPHeaderRewriter.setSSRC(ssrc, in: packet)
        ok = RTPHeaderRewriter.setSequenceNumber(sequenceNumber, in: packet) && ok
        ok = RTPHeaderRewriter.setTimestamp(timestamp, in: packet) && ok
        if let vp8 {
            if let pictureID {
                ok = vp8.rewritePictureID(pictureID, in: packet, payloadOffset: header.payloadOffset) && ok
            }
            if let tl0PictureIndex {
                ok = vp8.rewriteTL0PictureIndex(tl0PictureIndex, in: packet, payloadOffset: header.payloadOffset) && ok
            }
        }
        return ok
    }
}

/// A forwarder's decision for one packet and one subscriber: a value the
/// shell acts on (STYLE item 3).
package enum ForwardDecision: Equatable, Sendable {
    case drop(DropReason)
    case forward(RTPRewrite)
    /// Not forwarded, but its outgoing sequence number was kept free for
    /// it (it was missing upstream when later packets went out): send a
    /// padding-only packet with these values instead, so the subscriber
    /// sees no hole it would NACK forever, nor a gap its frame assembly
    /// could read as lost frames.
    case fillGap(RTPRewrite)
}
