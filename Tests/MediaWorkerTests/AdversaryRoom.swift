import Foundation
import Glibc
import MediaRouter
import MediaWorker
import Negotiation
import NetIO
import RTCP
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire

/// Two rooms on one real worker over loopback UDP, and an attacker in the
/// first: a participant holding valid keys, with a publisher transport (a
/// VP8 track recognised by its mid, as browsers' unsignalled tracks are)
/// and a subscriber transport receiving the victims' audio and video.
///
///     r1: PA_pub publishes TR_a (Opus, SSRC A0A0) and TR_v (VP8, B0B0);
///         PA_sub receives both (5500, 7700) and the attacker's TR_e (7701);
///         PA_evil publishes TR_e (mid 2) and receives TR_a (5501), TR_v (7702).
///     r2: PB_pub publishes TR_a (Opus, A0A0, the same ids as in r1);
///         PB_sub receives it (5500).
///
/// Each phase runs rounds: the victims send one packet per track, the
/// attacker its packets, then every client steps once. The worker's CPU is
/// its thread's CPU time (CLOCK_THREAD_CPUTIME_ID read on the worker
/// thread itself), per packet the worker received, so a loaded machine
/// slows both phases alike.
final class AdversaryRoom {
    static let evilMID: MID = "2"
    static let evilMIDExtensionID: UInt8 = 4
    static let evilSSRC: UInt32 = 0xE0E0
    static let victimAudioOut: UInt32 = 0x5500
    static let victimVideoOut: UInt32 = 0x7700
    static let evilAudioOut: UInt32 = 0x5501
    static let evilVideoOut: UInt32 = 0x7702

    let bed: RoomWorkerHarness
    let publisher1, subscriber1, publisher2, subscriber2, evilPublisher, evilSubscriber: UDPClient
    var clients: [UDPClient] { [publisher1, subscriber1, publisher2, subscriber2, evilPublisher, evilSubscriber] }
    private var victimNumber = 0
    private var evilNumber = 0

    init() throws {
        bed = try RoomWorkerHarness()
        let c = bed.certificate
        (publisher1, subscriber1, publisher2, subscriber2) = try (
            UDPClient(certificate: c), UDPClient(certificate: c), UDPClient(certificate: c), UDPClient(certificate: c)
        )
        (evilPublisher, evilSubscriber) = try (UDPClient(certificate: c), UDPClient(certificate: c))
        try bed.open(publisher1, room: "r1", participant: "PA_pub", role: .publisher)
        try bed.open(evilPublisher, room: "r1", participant: "PA_evil", role: .publisher)
        try bed.open(publisher2, room: "r2", participant: "PB_pub", role: .publisher)
        add("r1", "PA_pub", "TR_a", Tracks.opusTrack(mid: "0", ssrc: 0xA0A0))
        add("r1", "PA_pub", "TR_v", Tracks.vp8Track(mid: "1", ssrc: 0xB0B0))
        add("r1", "PA_evil", "TR_e", Tracks.vp8Track(mid: Self.evilMID, midID: Self.evilMIDExtensionID))
        add("r2", "PB_pub", "TR_a", Tracks.opusTrack(mid: "0", ssrc: 0xA0A0))
        try bed.open(subscriber1, room: "r1", participant: "PA_sub", role: .subscriber)
        try bed.open(evilSubscriber, room: "r1", participant: "PA_evil", role: .subscriber)
        try bed.open(subscriber2, room: "r2", participant: "PB_sub", role: .subscriber)
        forward("r1", "TR_a", to: "PA_sub", audio: true, ssrc: Self.victimAudioOut)
        forward("r1", "TR_v", to: "PA_sub", audio: false, ssrc: Self.victimVideoOut)
        forward("r1", "TR_e", to: "PA_sub", audio: false, ssrc: 0x7701)
        forward("r1", "TR_a", to: "PA_evil", audio: true, ssrc: Self.evilAudioOut)
        forward("r1", "TR_v", to: "PA_evil", audio: false, ssrc: Self.evilVideoOut)
        forward("r2", "TR_a", to: "PB_sub", audio: true, ssrc: Self.victimAudioOut)
        try #require(try bed.connect(clients))
    }

    func stop() { bed.stop() }

    private func add(_ room: String, _ participant: String, _ track: String, _ description: PublishedTrackDescription) {
        bed.execute(
            .addIncomingTrack(room: room, participant: ParticipantID(participant), trackID: track, description: description))
    }

    private func forward(_ room: String, _ track: String, to subscriber: String, audio: Bool, ssrc: UInt32) {
        let codec: CodecDescription = audio ? .opus(payloadType: Tracks.opus) : .vp8(payloadType: Tracks.vp8)
        bed.execute(
            .forward(
                room: room, trackID: track, subscriber: ParticipantID(subscriber),
                outgoing: Tracks.outgoing(codec, kind: audio ? .audio : .video, ssrc: ssrc, trackID: track)))
    }

    // MARK: Traffic

    private func opus(_ n: Int) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: 1000 + n), timestamp: UInt32(960 * n), ssrc: 0xA0A0,
            payload: RTPBuilders.opusPayload(frameBytes: 60))
    }

    private func vp8(_ n: Int, ssrc: UInt32, extensions: [(UInt8, [UInt8])] = []) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 96, sequenceNumber: UInt16(truncatingIfNeeded: 2000 + n), timestamp: UInt32(3000 * (n / 2)), ssrc: ssrc,
            marker: n % 2 == 1, extensions: extensions,
            payload: RTPBuilders.vp8Payload(pictureID: UInt16(n / 2 & 0x7FFF), keyframe: n % 100 == 0)
                + [UInt8](repeating: 0x33, count: 300))
    }

    /// The attacker's well-behaved media: its track's VP8 with the mid
    /// extension, forwarded to PA_sub.
    func normalRTP() -> [UInt8] {
        defer { evilNumber += 1 }
        return vp8(evilNumber, ssrc: Self.evilSSRC, extensions: [(Self.evilMIDExtensionID, Array(Self.evilMID.description.utf8))])
    }

    /// What a receive-only browser sends about a stream it receives.
    func normalReceiverReport() -> [UInt8] {
        RTCPBuilders.receiverReportWithCNAME(
            sender: SSRC(0xEE01), cname: "evil",
            reports: [ReceptionReport(ssrc: SSRC(Self.evilAudioOut), extendedHighestSequenceNumber: 1000, jitter: 3)])
    }

    /// One round: the victims send, the attacker sends `packets`, every
    /// client steps once.
    func round(attacker packets: [[UInt8]], rtcp: Bool, fromPublisher: Bool) throws -> Int {
        publisher1.sendMedia(opus(victimNumber))
        publisher1.sendMedia(vp8(victimNumber, ssrc: 0xB0B0))
        publisher2.sendMedia(opus(victimNumber))
        victimNumber += 1
        var sent = 0
        let attacker = fromPublisher ? evilPublisher : evilSubscriber
        for p in packets where attacker.sendMedia(p, rtcp: rtcp) { sent += 1 }
        for c in clients { try c.step() }
        return sent
    }

    /// The worker thread's CPU time and the packets it has taken in.
    func sample() throws -> WorkerSample {
        let s = bed.query { engine in
            var ts = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
            let c = engine.counters
            return WorkerSample(
                cpuNanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec),
                packets: Int64(c.rtpPacketsIn + c.rtcpPacketsIn), sizes: engine.stateSizes, residentBytes: 0,
                filtered: c.filtered, dropped: c.dropped)
        }
        var sample = try #require(s)
        sample.residentBytes = Self.residentBytes()
        return sample
    }

    /// The process's resident set (/proc/self/statm, in pages): libsrtp's
    /// streams and every table of the engine live in it.
    static func residentBytes() -> Int64 {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return 0 }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Runs `rounds` rounds of `make` (the attacker's packets of round i)
    /// and measures the worker, each half apart, and the victims.
    func phase(
        rounds: Int, rtcp: Bool, fromPublisher: Bool, _ make: (Int) -> [[UInt8]]
    ) throws -> Phase {
        let start = try sample()
        let startTime = MonotonicClock.now()
        var sent = 0
        var victimSent = 0
        var middle = start
        for i in 0..<rounds {
            if i == rounds / 2 { middle = try sample() }
            sent += try round(attacker: make(i), rtcp: rtcp, fromPublisher: fromPublisher)
            victimSent += 1
        }
        let end = try sample()
        // What the victims' last packets need to arrive.
        try UDPClient.pump(clients, for: .milliseconds(100))
        return Phase(
            start: start, middle: middle, end: end, attackerSent: sent, victimPacketsPerTrack: victimSent,
            victims: [
                victimStream(subscriber1, ssrc: Self.victimAudioOut, since: startTime),
                victimStream(subscriber1, ssrc: Self.victimVideoOut, since: startTime),
                victimStream(subscriber2, ssrc: Self.victimAudioOut, since: startTime),
            ])
    }

    /// Arrivals at `subscriber` of stream `ssrc` since `since`: count and
    /// the longest silence between two of them (or since the start).
    private func victimStream(_ subscriber: UDPClient, ssrc: UInt32, since: Instant) -> VictimStream {
        let arrivals = subscriber.received.filter { r in
            guard case .rtp = r.kind, r.at >= since, r.bytes.count >= 12 else { return false }
            return UInt32(r.bytes[8]) << 24 | UInt32(r.bytes[9]) << 16 | UInt32(r.bytes[10]) << 8 | UInt32(r.bytes[11]) == ssrc
        }.map(\.at)
        var longest = Duration.zero
        var previous = since
        for a in arrivals {
            longest = max(longest, a - previous)
            previous = a
        }
        return VictimStream(received: arrivals.count, longestGap: longest)
    }
}

struct WorkerSample: Sendable {
    var cpuNanoseconds: Int64
    var packets: Int64
    var sizes: RoomMediaStateSizes
    var residentBytes: Int64
    /// The worker's filter and drop counters: why a victim got nothing,
    /// when it did (a failure message prints what a phase added).
    var filtered: LayerFilter
    var dropped: RoomMediaCounters.Drops
}

struct VictimStream {
    var received: Int
    var longestGap: Duration
}

struct Phase {
    var start, middle, end: WorkerSample
    var attackerSent: Int
    var victimPacketsPerTrack: Int
    var victims: [VictimStream]

    static func perPacket(_ a: WorkerSample, _ b: WorkerSample) -> Double {
        Double(b.cpuNanoseconds - a.cpuNanoseconds) / Double(max(b.packets - a.packets, 1))
    }
    /// Worker nanoseconds per packet received in the phase.
    var nanosecondsPerPacket: Double { Self.perPacket(start, end) }
    var firstHalf: Double { Self.perPacket(start, middle) }
    var secondHalf: Double { Self.perPacket(middle, end) }
    /// Worker CPU of each half. Both halves send the same packets, so
    /// these compare growth without depending on how many of them the
    /// worker's packet counter counted (an attack the parser rejects
    /// counts few, and a handful more or fewer swings a per-packet ratio).
    var firstHalfNanoseconds: Int64 { middle.cpuNanoseconds - start.cpuNanoseconds }
    var secondHalfNanoseconds: Int64 { end.cpuNanoseconds - middle.cpuNanoseconds }
    var packetsReceived: Int64 { end.packets - start.packets }
}
