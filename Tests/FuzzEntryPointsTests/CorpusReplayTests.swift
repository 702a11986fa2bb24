import Foundation
import FuzzEntryPoints
import Testing

/// One libFuzzer target as the tests see it: its seed folder under
/// Fuzz/Corpus/, its entry point, and what makes mutations of its inputs
/// reach deep into the parser.
struct FuzzTarget: Sendable, CustomStringConvertible {
    let name: String
    let entry: @Sendable (UnsafeRawBufferPointer) -> Void
    /// Bytes that mean something to this format (delimiters, type codes).
    var interesting: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFF]
    /// Applied to half the mutants: repairs a header so the mutation gets
    /// past the first length check (e.g. STUN's message length).
    var fixup: (@Sendable (inout [UInt8]) -> Void)?
    /// Seeded mutants run per seed.
    var mutationsPerSeed = 2000
    var description: String { name }

    static let all: [FuzzTarget] = [
        FuzzTarget(
            name: "stun", entry: { FuzzEntryPoints.stun($0) },
            interesting: [0x00, 0x01, 0x80, 0x28, 0x21, 0x12, 0xA4, 0x42, 0xFF]
        ) { b in
            guard b.count >= 20, b.count - 20 <= 0xFFFF else { return }
            b[2] = UInt8(truncatingIfNeeded: (b.count - 20) >> 8)
            b[3] = UInt8(truncatingIfNeeded: b.count - 20)
        },
        FuzzTarget(
            name: "rtp", entry: { FuzzEntryPoints.rtp($0) },
            interesting: [0x80, 0x90, 0xA0, 0xBE, 0xDE, 0x10, 0x00, 0x0F, 0xFF]),
        FuzzTarget(
            name: "rtcp", entry: { FuzzEntryPoints.rtcp($0) },
            interesting: [0x80, 0x81, 0x8F, 0xC8, 0xC9, 0xCD, 0xCE, 0x00, 0xFF]),
        FuzzTarget(
            name: "sdp", entry: { FuzzEntryPoints.sdp($0) },
            interesting: Array(" :;,/=~\r\n0a*".utf8) + [0x00, 0xFF, 0xCC, 0x81]),
        FuzzTarget(
            name: "codecs", entry: { FuzzEntryPoints.codecs($0) },
            interesting: [0x80, 0x90, 0x10, 0x18, 0x1C, 0x7C, 0x85, 0xFF, 0x00]),
        FuzzTarget(
            name: "http", entry: { FuzzEntryPoints.http($0) },
            interesting: Array(" :,/?\r\n0129-\t".utf8) + [0x00, 0x7F, 0xFF]),
        FuzzTarget(
            name: "websocket", entry: { FuzzEntryPoints.websocket($0) },
            interesting: [0x00, 0x01, 0x02, 0x08, 0x09, 0x0A, 0x80, 0x81, 0x82, 0x88, 0xFE, 0xFF, 0x7E, 0x7F, 0x03, 0xE8]),
        // RTP packets with and without CSRCs, extensions and padding, RTX
        // packets, a padding-only probe; the entry point checks that wrap
        // and unwrap round-trip.
        FuzzTarget(
            name: "rtx", entry: { FuzzEntryPoints.rtx($0) },
            interesting: [0x80, 0x90, 0xA0, 0xBE, 0xDE, 0x10, 0x00, 0x01, 0x02, 0x0F, 0xFF], mutationsPerSeed: 3000),
        // roombot's H.264 depacketizer: chunks of control byte, length,
        // RTP payload (STAP-A, FU-A, single units, interleaved types).
        FuzzTarget(
            name: "h264-depacketizer", entry: { FuzzEntryPoints.h264Depacketizer($0) },
            interesting: [0x00, 0x01, 0x05, 0x07, 0x08, 0x40, 0x41, 0x45, 0x65, 0x67, 0x68, 0x78, 0x7C, 0x80, 0x81, 0xC0, 0xFF]),
        FuzzTarget(
            name: "vp8KeyframeHeader", entry: { FuzzEntryPoints.vp8KeyframeHeader($0) },
            interesting: [0x00, 0x01, 0x10, 0x50, 0x80, 0x90, 0x9D, 0x2A, 0x3F, 0xC0, 0xFF], mutationsPerSeed: 3000),
        // roombot's WebSocket: the server's 101 head, then server frames.
        FuzzTarget(
            name: "websocket-client", entry: { FuzzEntryPoints.websocketClient($0) },
            interesting: Array(" :\r\n01HTw".utf8) + [0x00, 0x7E, 0x7F, 0x80, 0x81, 0x88, 0x89, 0xFF]),
        // The HTTPS listener's TLS server: real ClientHellos (Python, curl,
        // openssl TLS 1.2 and 1.3), a truncated one, plain HTTP. Each input
        // runs a handshake in OpenSSL, so fewer mutations per seed.
        FuzzTarget(
            name: "tls-server", entry: { FuzzEntryPoints.tlsServer($0) },
            interesting: [0x00, 0x01, 0x02, 0x03, 0x04, 0x16, 0x15, 0x17, 0x2B, 0x33, 0x10, 0xFF],
            fixup: { b in
                // The record length (bytes 3-4) and the handshake length (6-8).
                guard b.count >= 9, b.count - 5 <= 0xFFFF else { return }
                b[3] = UInt8(truncatingIfNeeded: (b.count - 5) >> 8)
                b[4] = UInt8(truncatingIfNeeded: b.count - 5)
                b[6] = 0
                b[7] = UInt8(truncatingIfNeeded: (b.count - 9) >> 8)
                b[8] = UInt8(truncatingIfNeeded: b.count - 9)
            }, mutationsPerSeed: 200),
        // Transport-cc feedback through the worker's walker and estimator:
        // 4 bytes of send-history shape, then an RTCP compound. The fixup
        // keeps the first packet's length field right.
        FuzzTarget(
            name: "transport-feedback", entry: { FuzzEntryPoints.transportFeedback($0) },
            interesting: [0x00, 0x01, 0x1F, 0x20, 0x40, 0x80, 0x8F, 0xC0, 0xCD, 0xE0, 0xFF],
            fixup: { b in
                guard b.count >= 8, (b.count - 4) % 4 == 0 else { return }
                let words = (b.count - 4) / 4 - 1
                b[6] = UInt8(truncatingIfNeeded: words >> 8)
                b[7] = UInt8(truncatingIfNeeded: words)
            }, mutationsPerSeed: 1000),
        // SDP offers (Chromium, Firefox, aiortc, roombot) through publish,
        // WHEP playback and subscriber negotiation: a few hundred
        // microseconds each, so fewer mutations.
        FuzzTarget(
            name: "negotiation", entry: { FuzzEntryPoints.negotiation($0) },
            interesting: Array(" :;,/=~\r\n0a*".utf8) + [0x00, 0xFF], mutationsPerSeed: 150),
        // ICE-TCP's RFC 4571 framing: a max-frame byte, a chunk-size byte,
        // then the stream (length prefixes and frames).
        FuzzTarget(
            name: "stream-framing", entry: { FuzzEntryPoints.streamFraming($0) },
            interesting: [0x00, 0x01, 0x02, 0x07, 0x14, 0x80, 0xFE, 0xFF]),
        // The TURN server: Allocate, CreatePermission, ChannelBind, Send,
        // ChannelData and Refresh, signed for the entry point's engine,
        // as one stream and as datagrams.
        FuzzTarget(
            name: "turn", entry: { FuzzEntryPoints.turn($0) },
            interesting: [0x00, 0x01, 0x03, 0x08, 0x09, 0x16, 0x19, 0x40, 0x12, 0x13, 0x21, 0x12, 0xA4, 0x42, 0xFF],
            mutationsPerSeed: 300),
        // The room protocol's JSON, both directions (every message type of
        // docs/PROTOCOL.md, a deep payload, a long list): JSONDecoder runs
        // several times per input, so fewer mutations.
        FuzzTarget(
            name: "room-protocol", entry: { FuzzEntryPoints.roomProtocol($0) },
            interesting: Array(#"{}[]",:\0-1e.tfnu"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xFF], mutationsPerSeed: 300),
        // Relay messages between media workers: each kind, a bad kind, a
        // truncated body; what decodes must re-encode to the same bytes.
        FuzzTarget(
            name: "relay-message", entry: { FuzzEntryPoints.relayMessage($0) },
            interesting: [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x80, 0xFF]),
        // Replies from Redis through hiredis's reader with small bounds:
        // arrays past the element limit, bulk strings past the byte limit.
        FuzzTarget(
            name: "redis-reply", entry: { FuzzEntryPoints.redisReply($0) },
            interesting: Array("*$:+-\r\n0123456789".utf8) + [0x00, 0xFF]),
        // Shard records as another node wrote them (a Chromium publisher,
        // an empty part, bounds and conversions broken): JSONDecoder runs
        // per input, so fewer mutations.
        FuzzTarget(
            name: "room-shard-record", entry: { FuzzEntryPoints.roomShardRecord($0) },
            interesting: Array(#"{}[]",:\0-1e.tfnu"#.utf8) + [0x00, 0x7F, 0xC3, 0xFF], mutationsPerSeed: 200),
        // DCEP messages (RFC 8832) and the channel table behind them.
        FuzzTarget(
            name: "data-channel-message", entry: { FuzzEntryPoints.dataChannelMessage($0) },
            interesting: [0x00, 0x01, 0x02, 0x03, 0x32, 0x33, 0x35, 0x38, 0x39, 0x80, 0x81, 0x82, 0xC3, 0xFF]),
        // SRTP and SRTCP unprotect on the OpenSSL and libsrtp2 backends at
        // once (profile byte, then control/length/bytes chunks, most
        // protected first): the two must agree on every chunk. Four
        // sessions are keyed per input, so fewer mutations.
        FuzzTarget(
            name: "srtp", entry: { FuzzEntryPoints.srtp($0) },
            interesting: [0x00, 0x01, 0x02, 0x03, 0x06, 0x07, 0x10, 0x80, 0x81, 0x90, 0xBE, 0xC8, 0xC9, 0xDE, 0xFF],
            mutationsPerSeed: 200),
    ]

    func seeds() throws -> [[UInt8]] {
        let folder = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/\(name)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        return try names.map { [UInt8](try Data(contentsOf: folder.appendingPathComponent($0))) }
    }

    func run(_ bytes: [UInt8]) { bytes.withUnsafeBytes { entry($0) } }
}

/// xorshift64: the same mutations on every run, no Foundation randomness.
struct XorShift64 {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}

/// Replays each seed corpus, then thousands of seeded mutations of every
/// seed, through the same entry points libFuzzer runs (Fuzz/). The entry
/// points check their invariants with `precondition`, so a trap anywhere
/// fails the whole test run: this is the fuzzers' regression suite in CI.
@Suite struct CorpusReplayTests {
    @Test(arguments: FuzzTarget.all)
    func everySeedReplays(target: FuzzTarget) throws {
        let seeds = try target.seeds()
        #expect(seeds.count >= 5, "Fuzz/Corpus/\(target.name) should hold at least five seeds")
        for seed in seeds { target.run(seed) }
    }

    @Test(arguments: FuzzTarget.all)
    func seededMutationsNeverTrap(target: FuzzTarget) throws {
        var rng = XorShift64(seed: 0x5357_4946_544C_4554 ^ UInt64(target.name.utf8.count))
        for seed in try target.seeds() {
            for _ in 0..<target.mutationsPerSeed {
                var bytes = seed
                for _ in 0...rng.below(4) { Self.mutate(&bytes, target.interesting, &rng) }
                if let fixup = target.fixup, rng.below(2) == 0 { fixup(&bytes) }
                target.run(bytes)
            }
        }
    }

    /// One mutation: bit flip, meaningful byte, random byte, truncation,
    /// insertion, duplicated prefix, or a rewritten 16-bit field on a 4-byte
    /// boundary (where STUN, RTP and RTCP keep their lengths and types).
    static func mutate(_ b: inout [UInt8], _ interesting: [UInt8], _ rng: inout XorShift64) {
        let at = rng.below(b.count)
        switch rng.below(7) {
        case 0 where !b.isEmpty: b[at] ^= UInt8(1) << UInt8(rng.below(8))
        case 1 where !b.isEmpty: b[at] = interesting[rng.below(interesting.count)]
        case 2 where !b.isEmpty: b[at] = UInt8(truncatingIfNeeded: rng.next())
        case 3 where !b.isEmpty: b.removeSubrange(at...)
        case 4: b.insert(interesting[rng.below(interesting.count)], at: min(at, b.count))
        case 5: b += b.prefix(rng.below(16))
        default:
            let field = (at & ~3) + 2
            if field + 1 < b.count {
                let v = rng.below(3) == 0 ? rng.below(0x1_0000) : rng.below(64)
                b[field] = UInt8(truncatingIfNeeded: v >> 8)
                b[field + 1] = UInt8(truncatingIfNeeded: v)
            }
        }
    }
}
