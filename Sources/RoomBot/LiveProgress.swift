import Foundation
import Wire

/// The progress line printed every second: what is true now, not since
/// the start. Bots count as connected while their transport is connected
/// and (room protocol) their WebSocket is open; a track counts as flowing
/// while it had a packet within the last `window`; Mbps and loss are over
/// the interval since the previous line. So every figure drops the moment
/// media or signalling stops. Where bots publish (publishers,
/// participants) the line adds what they sent over the last interval:
/// the received figures come first, as a participant receives and sends.
struct LiveProgress {
    /// 1 s: above a DTX audio track's longest normal gap (400 ms).
    var window = Duration.seconds(1)
    private var previous: (at: Instant, bytes: UInt64, received: UInt64, lost: Int64, sent: UInt64)?

    /// `start`: the first line's interval begins there.
    init(start: Instant? = nil) {
        previous = start.map { ($0, 0, 0, 0, 0) }
    }

    struct Sample: Equatable {
        var joined: Int
        var bots: Int
        var connected: Int
        var announced: Int
        var flowing: Int
        /// Over the last interval, Mbit/s and percent.
        var mbps: Double
        var lossPercent: Double
        var errors: Int
        /// Some bot publishes: the line shows `sentMbps`.
        var publishing = false
        var sentMbps = 0.0
    }

    mutating func sample(_ records: [BotRecord], now: Instant) -> Sample {
        var bytes: UInt64 = 0
        var received: UInt64 = 0
        var lost: Int64 = 0
        var sent: UInt64 = 0
        for r in records {
            sent &+= r.bytesSent
            bytes &+= r.earlierTotals.bytes
            received &+= r.earlierTotals.packets
            lost += r.earlierTotals.lost
            for t in r.tracks.values {
                bytes &+= t.bytes
                received &+= t.reception.packetsReceived
                lost += max(t.reception.cumulativeLost, 0)
            }
        }
        var mbps = 0.0
        var loss = 0.0
        var sentMbps = 0.0
        if let p = previous, now > p.at {
            let seconds = Double((now - p.at).nanoseconds) / 1e9
            mbps = Double(bytes &- p.bytes) * 8 / 1e6 / seconds
            sentMbps = Double(sent &- p.sent) * 8 / 1e6 / seconds
            let got = Double(received &- p.received)
            let missing = Double(max(lost - p.lost, 0))
            loss = got + missing > 0 ? missing / (got + missing) * 100 : 0
        }
        previous = (now, bytes, received, lost, sent)
        return Sample(
            joined: records.filter { $0.joinedAt != nil }.count, bots: records.count,
            connected: records.filter(\.isUp).count, announced: records.reduce(0) { $0 + $1.tracksAnnounced },
            flowing: records.reduce(0) { $0 + $1.tracksFlowing(at: now, window: window) }, mbps: mbps,
            lossPercent: loss, errors: records.reduce(0) { $0 + $1.errors.values.reduce(0, +) },
            publishing: records.contains { $0.role.publishes }, sentMbps: sentMbps)
    }

    static func line(_ s: Sample, elapsedSeconds: Double) -> String {
        String(
            format:
                "[%5.1fs] bots %d/%d joined, %d connected, tracks %d announced %d flowing, %.2f Mbps, loss %.2f%%%@, errors %d",
            elapsedSeconds, s.joined, s.bots, s.connected, s.announced, s.flowing, s.mbps, s.lossPercent,
            s.publishing ? String(format: ", sent %.2f Mbps", s.sentMbps) : "", s.errors)
    }
}
