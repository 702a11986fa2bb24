import Codecs
import Wire

extension StreamRewriter {
    enum Outcome: Equatable {
        case drop(DropReason)
        case forward(Mapped)
        /// An unwanted late packet whose outgoing number was kept free.
        case fillGap(Mapped)
    }

    /// The current source: its own unwrappers and its mapping onto the
    /// outgoing stream.
    struct Source: Sendable {
        let ssrc: SSRC
        var sequences: SequenceNumberUnwrapper
        var timestamps: TimestampUnwrapper
        var numbering: ContiguousNumbering
        /// outgoing extended timestamp = incoming extended + offset.
        var timestampOffset: UInt64
        /// Started on this source's first forwarded picture ID.
        var pictures: PictureNumbering?
        /// Outgoing TL0PICIDX = incoming + offset, from the first forwarded.
        var tl0Offset: UInt8?

        init(
            ssrc: SSRC, sequences: SequenceNumberUnwrapper, timestamps: TimestampUnwrapper,
            numbering: ContiguousNumbering, timestampOffset: UInt64
        ) {
            self.ssrc = ssrc
            self.sequences = sequences
            self.timestamps = timestamps
            self.numbering = numbering
            self.timestampOffset = timestampOffset
        }

        /// One packet of this source.
        mutating func process(
            _ packet: SourcePacket, wanted: Bool, lastPictureID: UInt64?, lastTL0PictureIndex: UInt8?
        ) -> Outcome {
            let n = sequences.unwrap(packet.sequenceNumber)
            let placement = numbering.place(n)
            switch placement {
            case .beforeStart: return .drop(.beforeSourceSwitch)
            case .tooOld: return .drop(.outsideHistory)
            case .highest: return .drop(.duplicate)
            case .late: if numbering.wasSeen(n) { return .drop(.duplicate) }
            case .ahead: break
            }
            guard wanted else {
                _ = mapVP8(packet.vp8, forward: false, lastPictureID: lastPictureID, lastTL0PictureIndex: lastTL0PictureIndex)
                if placement == .ahead {
                    numbering.dropAhead(n)
                    return .drop(.notForwarded)
                }
                // Late: later packets went out, so its number was kept free
                // (an upstream gap stays a gap). Dropping it would leave
                // that hole for good; it is filled with padding instead.
                numbering.markSeen(n)
                let timestampOut = timestamps.unwrap(packet.timestamp) &+ timestampOffset
                return .fillGap(Mapped(sequenceNumber: numbering.outgoing(n), timestamp: timestampOut))
            }
            let sequenceOut: UInt64
            if placement == .ahead {
                sequenceOut = numbering.forwardAhead(n)
            } else {
                numbering.markSeen(n)
                sequenceOut = numbering.outgoing(n)
            }
            let timestampOut = timestamps.unwrap(packet.timestamp) &+ timestampOffset
            let vp8 = mapVP8(packet.vp8, forward: true, lastPictureID: lastPictureID, lastTL0PictureIndex: lastTL0PictureIndex)
            return .forward(Mapped(sequenceNumber: sequenceOut, timestamp: timestampOut, pictureID: vp8.pictureID, tl0: vp8.tl0))
        }

        /// Maps (or, for a drop, accounts) the VP8 picture ID and TL0PICIDX.
        mutating func mapVP8(
            _ descriptor: VP8PayloadDescriptor?, forward: Bool, lastPictureID: UInt64?, lastTL0PictureIndex: UInt8?
        ) -> (pictureID: UInt64?, tl0: UInt8?) {
            guard let descriptor else { return (nil, nil) }
            var pictureOut: UInt64?
            if let id = descriptor.pictureID {
                if pictures == nil {
                    // Pictures start at the first forwarded one; drops before it
                    // need no accounting.
                    guard forward else { return (nil, nil) }
                    pictures = PictureNumbering(first: id, long: descriptor.hasLongPictureID, after: lastPictureID)
                    pictureOut = pictures?.firstOutgoing
                } else if forward {
                    pictureOut = pictures?.forward(id)
                } else {
                    pictures?.drop(id)
                }
            }
            guard forward, let tl0 = descriptor.tl0PictureIndex else { return (pictureOut, nil) }
            if tl0Offset == nil {
                if let last = lastTL0PictureIndex {
                    // A base-layer picture starts a new TL0 period; a higher
                    // layer's picture belongs to the current one.
                    let step: UInt8 = (descriptor.temporalLayerID ?? 0) == 0 ? 1 : 0
                    tl0Offset = last &+ step &- tl0
                } else {
                    tl0Offset = 0
                }
            }
            return (pictureOut, tl0 &+ (tl0Offset ?? 0))
        }
    }

    /// Picture ID continuity within one source: a `ContiguousNumbering`
    /// over extended picture IDs, so dropped pictures take no ID.
    struct PictureNumbering: Sendable {
        var unwrapper: SerialNumberUnwrapper
        var numbering: ContiguousNumbering
        let firstOutgoing: UInt64

        init(first id: UInt16, long: Bool, after lastOutgoing: UInt64?) {
            unwrapper = SerialNumberUnwrapper(bits: long ? 15 : 7)
            let n = unwrapper.unwrap(UInt64(id))
            firstOutgoing = lastOutgoing.map { $0 &+ 1 } ?? n
            numbering = ContiguousNumbering(first: n, outgoing: firstOutgoing)
        }

        /// The outgoing ID of a forwarded packet of picture `id`.
        mutating func forward(_ id: UInt16) -> UInt64 {
            let n = unwrapper.unwrap(UInt64(id))
            if numbering.place(n) == .ahead { return numbering.forwardAhead(n) }
            return numbering.outgoing(n)
        }

        /// A dropped packet of picture `id`: a new picture takes no ID.
        mutating func drop(_ id: UInt16) {
            let n = unwrapper.unwrap(UInt64(id))
            if numbering.place(n) == .ahead { numbering.dropAhead(n) }
        }
    }
}
