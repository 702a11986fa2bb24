import RTP
import Wire

/// One Opus audio track on its way into a file, sans-IO. Each RTP packet
/// carries exactly one Opus packet (RFC 7587 section 4.2), so a frame is
/// a payload; packets are put back in order first (`RTPReorderBuffer`,
/// waiting up to `repairWait` for a repair), and each is timed on the
/// sender's wall clock by the stream's Sender Report (frames before the
/// first report wait for it, at most `untimedLimit`: the mapping holds
/// for earlier timestamps too). A lost packet is a
/// gap in the timestamps, which a player fills (Opus packet loss
/// concealment).
package struct AudioTrackRecorder {
    package struct Statistics: Equatable, Sendable {
        package var framesWritten = 0
        /// Frames dropped waiting for a first Sender Report.
        package var framesUntimed = 0
        package var malformed = 0
        package var lost = 0
        package init() {}
    }

    package private(set) var statistics = Statistics()
    private var clock = SenderReportClock(clockRate: 48_000)
    private var buffer: RTPReorderBuffer
    private var untimed: [(rtpTimestamp: UInt32, bytes: [UInt8])] = []
    /// Three seconds of 20 ms frames.
    package static let untimedLimit = 150

    package init(repairWait: Duration = .milliseconds(400)) {
        buffer = RTPReorderBuffer(capacity: 128, packetBytes: 1500, repairWait: repairWait)
    }

    package mutating func senderReport(
        ntp: UInt64, rtpTimestamp: UInt32, output: (_ ntpMicroseconds: Int64, _ bytes: [UInt8]) -> Void
    ) {
        clock.senderReport(ntp: ntp, rtpTimestamp: rtpTimestamp)
        for frame in untimed {
            guard let t = clock.frameMicroseconds(of: frame.rtpTimestamp) else { break }
            statistics.framesWritten += 1
            output(t, frame.bytes)
        }
        untimed.removeAll()
    }

    /// One RTP packet; `output` gets each frame released, in order, with
    /// its NTP microseconds.
    package mutating func packet(
        _ packet: UnsafeRawBufferPointer, now: Instant, output: (_ ntpMicroseconds: Int64, _ bytes: [UInt8]) -> Void
    ) {
        guard let header = try? RTPHeader(parsing: RawSpan(_unsafeBytes: packet)), header.payloadLength > 0,
            header.payloadRange.upperBound <= packet.count
        else { return statistics.malformed += 1 }
        buffer.insert(sequenceNumber: header.sequenceNumber, packet: packet, now: now) { p, skipped in
            emit(p, skipped: skipped, output: output)
        }
        tick(now: now, output: output)
    }

    package mutating func tick(now: Instant, output: (_ ntpMicroseconds: Int64, _ bytes: [UInt8]) -> Void) {
        buffer.drain(now: now) { p, skipped in emit(p, skipped: skipped, output: output) }
    }

    package mutating func finish(output: (_ ntpMicroseconds: Int64, _ bytes: [UInt8]) -> Void) {
        buffer.flush { p, skipped in emit(p, skipped: skipped, output: output) }
    }

    package var repairDeadline: Instant? { buffer.repairDeadline }

    private mutating func emit(
        _ packet: UnsafeRawBufferPointer, skipped: Int, output: (_ ntpMicroseconds: Int64, _ bytes: [UInt8]) -> Void
    ) {
        statistics.lost += skipped
        guard let header = try? RTPHeader(parsing: RawSpan(_unsafeBytes: packet)) else { return }
        let bytes = Array(UnsafeRawBufferPointer(rebasing: packet[header.payloadRange]))
        guard let ntp = clock.frameMicroseconds(of: header.timestamp) else {
            if untimed.count >= Self.untimedLimit {
                untimed.removeFirst()
                statistics.framesUntimed += 1
            }
            untimed.append((header.timestamp, bytes))
            return
        }
        statistics.framesWritten += 1
        output(ntp, bytes)
    }
}
