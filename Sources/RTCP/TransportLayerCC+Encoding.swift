import Wire

/// One packet to report in transport-wide feedback: its transport-wide
/// sequence number and when it arrived, or nil if it did not.
package struct TransportCCArrival: Equatable, Sendable {
    package var sequenceNumber: UInt16
    package var arrival: Instant?

    package init(sequenceNumber: UInt16, arrival: Instant?) {
        self.sequenceNumber = sequenceNumber
        self.arrival = arrival
    }
}

extension TransportLayerCC {
    /// Builds feedback for `arrivals`, which are in increasing transport
    /// sequence order (wrapping at 65536); sequence numbers missing between
    /// two entries are reported not received.
    ///
    /// The reference time is the first arrival rounded down to 64 ms, and
    /// every arrival is rounded down to 250 us before deltas are taken, so
    /// rounding errors do not accumulate. Building stops before an entry
    /// that cannot go in this feedback: one that does not move forward
    /// (a duplicate, or a step of 32768 or more), one whose delta does not
    /// fit 16 signed bits, or one past 65535 statuses. `consumed` says how
    /// many entries went in; the caller starts the next feedback there.
    package static func build(
        senderSSRC: SSRC, mediaSSRC: SSRC, feedbackPacketCount: UInt8,
        arrivals: [TransportCCArrival]
    ) -> (feedback: TransportLayerCC, consumed: Int) {
        var feedback = TransportLayerCC(
            senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, baseSequenceNumber: 0,
            referenceTime: 0, feedbackPacketCount: feedbackPacketCount, statuses: [])
        let consumed = build(into: &feedback, arrivals: arrivals[...])
        return (feedback, consumed)
    }

    /// The same into `feedback`, whose SSRCs and count the caller set and
    /// whose status storage is reused (the server's feedback to each
    /// publisher every 50 ms allocates nothing once it has grown).
    /// Returns how many of `arrivals` went in.
    package static func build(into feedback: inout TransportLayerCC, arrivals: ArraySlice<TransportCCArrival>) -> Int {
        let base = arrivals.first?.sequenceNumber ?? 0
        feedback.baseSequenceNumber = base
        feedback.referenceTime = 0
        feedback.statuses.removeAll(keepingCapacity: true)
        var previousTicks: Int64?
        var consumed = 0
        for entry in arrivals {
            // Position relative to base; entries must move strictly forward.
            let offset = Int(entry.sequenceNumber &- base)
            if consumed > 0 {
                guard offset >= feedback.statuses.count, offset < feedback.statuses.count + 32768 else { break }
            }
            guard offset < Int(UInt16.max) else { break }
            var status = TransportCCStatus.notReceived
            var ticks: Int64?
            if let arrival = entry.arrival {
                let t = floorDivide(arrival.nanoseconds, 250_000)
                let previous: Int64
                if let previousTicks {
                    previous = previousTicks
                } else {
                    let reference = floorDivide(t, 256)
                    // The field is 24 bits: keep the low 24, sign-extended.
                    feedback.referenceTime = Int32(truncatingIfNeeded: (reference << 40) >> 40)
                    previous = reference * 256
                }
                let delta = t - previous
                if let small = UInt8(exactly: delta) {
                    status = .receivedSmallDelta(small)
                } else if let large = Int16(exactly: delta) {
                    status = .receivedLargeDelta(large)
                } else {
                    break
                }
                ticks = t
            }
            if offset > feedback.statuses.count {
                feedback.statuses.append(contentsOf: repeatElement(.notReceived, count: offset - feedback.statuses.count))
            }
            feedback.statuses.append(status)
            if let ticks { previousTicks = ticks }
            consumed += 1
        }
        return consumed
    }

    /// Appends the packet, choosing chunks greedily from the current
    /// position: a run-length chunk when the run of one symbol is at least
    /// as long as the vector that would otherwise be used (so runs of 7 or
    /// more where a large delta is near, 14 or more elsewhere); else a
    /// two-bit vector when a large delta is among the next 14 statuses; else
    /// a one-bit vector. At most 65535 statuses are written.
    package func serialize(into writer: inout ByteWriter) {
        let selected = statuses.prefix(Int(UInt16.max))
        writer.rtcpPacket(count: Self.format, packetType: RTCPPacketType.transportFeedback) { w in
            w.uint32(senderSSRC.rawValue)
            w.uint32(mediaSSRC.rawValue)
            w.uint16(baseSequenceNumber)
            w.uint16(UInt16(selected.count))
            w.uint24(UInt32(bitPattern: referenceTime) & 0xFF_FFFF)
            w.uint8(feedbackPacketCount)
            Self.writeChunks(selected, into: &w)
            for status in selected {
                switch status {
                case .notReceived: break
                case .receivedSmallDelta(let t): w.uint8(t)
                case .receivedLargeDelta(let t): w.uint16(UInt16(bitPattern: t))
                }
            }
        }
    }

    package func serialized() -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer)
        return writer.bytes
    }

    static func writeChunks(_ statuses: ArraySlice<TransportCCStatus>, into w: inout ByteWriter) {
        var i = statuses.startIndex
        let end = statuses.endIndex
        while i < end {
            let symbol = statuses[i].symbol
            var run = 1
            while i + run < end, run < maximumRunLength, statuses[i + run].symbol == symbol { run += 1 }
            let window = statuses[i..<min(i + 14, end)]
            let needsTwoBits = window.contains { $0.symbol == 2 }
            let vectorCapacity = needsTwoBits ? 7 : 14
            if run >= vectorCapacity || i + run == end {
                // Run-length chunk: T=0 | symbol (2) | run (13).
                w.uint16(UInt16(symbol) << 13 | UInt16(run))
                i += run
            } else if needsTwoBits {
                // Two-bit vector: T=1 | S=1 | 7 symbols.
                var chunk: UInt16 = 0xC000
                for k in 0..<7 where i + k < end {
                    chunk |= UInt16(statuses[i + k].symbol) << (12 - 2 * k)
                }
                w.uint16(chunk)
                i += 7
            } else {
                // One-bit vector: T=1 | S=0 | 14 symbols.
                var chunk: UInt16 = 0x8000
                for k in 0..<14 where i + k < end {
                    chunk |= UInt16(statuses[i + k].symbol) << (13 - k)
                }
                w.uint16(chunk)
                i += 14
            }
        }
    }
}

/// Division rounding towards negative infinity.
@inline(__always)
func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}
