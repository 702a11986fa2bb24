import BotMedia
import PeerSession
import RTP
import RTPStreams
import Wire

/// The light receive path (issue #14): a subscriber that completed ICE and
/// DTLS like any other counts each SRTP packet from its header, which SRTP
/// leaves in clear (RFC 3711 section 3.1): loss and jitter from sequence
/// numbers and timestamps (the same `ReceptionStatistics` as every bot,
/// so its RRs stay right), delay from abs-capture-time, the track from the
/// SSRC. Nothing is decrypted or decoded; no allocation per packet once a
/// track's statistics exist (mutated in place in the dictionary).
extension Bot {
    func receivedHeaderOnly(_ bytes: UnsafeMutableRawBufferPointer, at arrival: Instant) {
        // The padding count is the payload's last byte, encrypted: read the
        // header as if unpadded (the packet is not used further).
        bytes[0] &= ~0x20
        guard let header = try? RTPHeader(parsing: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(bytes))) else {
            return record.error("bad_rtp")
        }
        // Every packet counts for transport-cc, RTX and probes included.
        arrivals?.record(header, packet: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(bytes)), arrival: arrival)
        let ssrc = header.ssrc
        // By index: `tracks[ssrc] == nil` copied the whole statistics
        // value out per packet (perf, issue #14).
        var index = record.tracks.index(forKey: ssrc)
        if index == nil {
            // RTX and probes come on SSRCs no track announces: not counted.
            guard let track = announced[ssrc] else { return }
            var stats = TrackStats(track: track, ssrc: ssrc)
            stats.delay = LatencySamples(capacity: 2048)
            stats.captureTimeID = captureTimeIDs[ssrc]
            record.tracks[ssrc] = stats
            index = record.tracks.index(forKey: ssrc)
            if record.firstMediaAt == nil { record.firstMediaAt = arrival }
        }
        guard let index else { return }
        if record.recoveringSince != nil { record.recovered(at: arrival) }
        let packet = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(bytes))
        let clock = context.clock
        // One lookup, the statistics mutated in place.
        record.tracks.values[index].headerOnly(header, packet: packet, arrival: arrival, clock: clock)
    }
}

extension TrackStats {
    /// One header-only packet: reception statistics, bytes and gaps, and
    /// the delay from abs-capture-time, a 64-bit NTP capture timestamp
    /// first (http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time).
    mutating func headerOnly(_ header: RTPHeader, packet: RawSpan, arrival: Instant, clock: NTPClock?) {
        stream.received(header, arrival: arrival, isRetransmission: false)
        self.packet(bytes: packet.byteCount, at: arrival)
        guard let id = captureTimeID, let clock, let range = header.extensionValueRange(id: id, in: packet),
            range.count >= 8
        else { return }
        var reader = ByteReader(packet, offset: range.lowerBound)
        guard let ntp = try? reader.uint64(or: BotMediaError.truncated), let d = clock.elapsed(since: ntp, at: arrival)
        else { return }
        delay?.record(d)
    }
}
