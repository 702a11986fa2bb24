import Negotiation
import Wire

/// roombot's command line, parsed and validated before anything connects.
struct BotOptions: Equatable {
    /// Every `--url`, in the order given: bot i connects to
    /// `servers[i % servers.count]` (a cluster's nodes, or separate
    /// servers), publishers and subscribers alike.
    var servers: [ServerURL] = []
    /// Whether any URL is `wss://` or `https://`: TLS to that server.
    var secure: Bool { servers.contains(where: \.secure) }
    /// PEM CA certificates to trust instead of the system's (a test CA, or
    /// the server's self-signed certificate itself).
    var caFile: String?
    /// TLS without verifying the server's certificate.
    var insecure = false
    var path = "/rtc"
    /// Publishers publish through WHIP, subscribers play through WHEP
    /// (`POST /whip/<room>`, `/whep/<room>`), instead of the room WebSocket.
    var whip = false
    var whep = false
    var rooms: [String] = []
    var publishers = 1
    var subscribers = 1
    /// Bots per room that publish and subscribe to every other
    /// participant (`lk load-test`'s video conference), each one
    /// participant on one WebSocket with a publisher and a subscriber
    /// transport, as the web client joins.
    var participants = 0
    var audioOnly = false
    /// Data channel messages each publishing bot sends a second to its
    /// room (0: no data channel); `--data-rate`.
    var dataRate = 0.0
    var simulcast = true
    /// What publishers (and WHEP viewers) send and offer: VP8 (RFC 7741)
    /// or H.264 constrained baseline, packetization mode 1 (RFC 6184).
    var videoCodec = VideoCodecChoice.vp8
    /// Seconds; 0 runs until Ctrl-C.
    var duration: Double = 30
    /// Bots started per second.
    var ramp: Double = 10
    var key = ""
    var secret = ""
    var jsonPath: String?
    /// Local address to bind UDP sockets to; nil picks the route's.
    var bind: String?
    var maxLossPercent: Double?
    var maxJoinMilliseconds: Double?
    var maxDelayMilliseconds: Double?
    var minBitrateKbps: Double?
    /// Where encoded clips are cached; nil: $XDG_CACHE_HOME/swiftlet-roombot
    /// or ~/.cache/swiftlet-roombot.
    var cacheDirectory: String?
    /// Subscribers cycle each video track's `maxLayer` this often (seconds).
    var switchEvery: Double?
    /// Join and connect only: no media is sent or checked.
    var noMedia = false
    /// Seconds: the longest a received track may deliver nothing (a stall
    /// that lasts to the end of the run counts) before the run fails.
    /// 1.5 s: a 2 s stall fails, while a layer switch or a keyframe wait
    /// (a few hundred ms) does not.
    var maxFreezeSeconds = 1.5
    /// Errors (signalling closed, ICE/DTLS failure, server errors) do not
    /// fail the run; they are still counted and printed.
    var allowErrors = false
    /// Seconds a bot keeps trying to reach the server before it gives up.
    var connectTimeout: Double = 10
    /// The summary table with every column (about 190 characters wide).
    var wideTable = false
    /// How subscribers and participants show the video they receive, like
    /// `lk load-test --layout` (with `--participants`: each one's grid of
    /// the others).
    var layout: Layout?
    /// Light subscribers (issue #14): ICE, DTLS and RTCP like any other,
    /// but received RTP is counted from its header alone (SRTP leaves it
    /// in clear, RFC 3711 section 3.1); no NACK, no decryption.
    var light = false
    /// With `light`: one subscriber in this many decrypts and decodes as
    /// today (the first of each run of N); 0: none.
    var decodeEvery = 20
    /// The publishers' paced synthetic clip: the top layer's bitrate in
    /// kbit/s (lower simulcast layers a third and a tenth, as the default
    /// 1500/500/150) and the frame rate; nil: the default presets.
    var videoKbps: Int?
    var framesPerSecond: Int?
    /// Bot loops, each on its own thread with its own epoll set; bots are
    /// dealt out round robin.
    var threads = 1

    /// A viewer's screen layout: the width of the tile each video track
    /// is shown in, sent as `set-preference` `maxWidth` (the server then
    /// forwards the largest simulcast layer that fits, or the lowest).
    /// The tile sizes are LiveKit's load tester's: speaker one 1280x720
    /// and the others 356x200; grids 400x225, 320x180, 256x144. Tracks
    /// beyond the tiles get the smallest tile, not a pause: every track
    /// is still checked for freezes.
    enum Layout: String, CaseIterable, Equatable {
        case speaker
        case grid3x3 = "3x3"
        case grid4x4 = "4x4"
        case grid5x5 = "5x5"

        /// The width for the `index`th video track (in announcement order).
        func maxWidth(tile index: Int) -> Int {
            switch self {
            case .speaker: index == 0 ? 1280 : 356
            case .grid3x3: 400
            case .grid4x4: 320
            case .grid5x5: 256
            }
        }
    }

    enum VideoCodecChoice: String, Equatable { case vp8, h264 }

    /// The codec line of our offers for `videoCodec`.
    var offeredVideoCodec: CodecDescription {
        videoCodec == .h264 ? ClientOfferBuilder.h264 : ClientOfferBuilder.vp8
    }

    /// Kept equal to `swiftlet --version` (SwiftletServer's SwiftletVersion).
    static let version = "0.1.0-dev"
    static let devKey = "devkey"
    static let devSecret = "devsecret"
    /// More `--url`s than this is a mistake (one process loads a few
    /// nodes; a bigger cluster takes more roombot processes).
    static let maxServers = 64

    struct Invalid: Error, CustomStringConvertible, Equatable { let description: String }

    static let usage = """
        roombot: a headless WebRTC client that joins Swiftlet rooms in numbers and
        measures what users feel (join time, first frame, loss, jitter, RTT, end-to-end delay,
        freezes, layer switches). See docs/ROOMBOT.md.

        USAGE:
          roombot --url URL [--url URL ...] (--room NAME | --rooms N) [options]
          roombot --help

        OPTIONS:
          --url URL            ws://HOST:PORT/rtc or wss://HOST:PORT/rtc (the room WebSocket; HOST a
                               name or an IP); with --whip/--whep, http(s)://HOST:PORT is the base
                               of /whip and /whep. Give --url several times (or URL,URL,...) to
                               spread the bots over several servers or cluster nodes: bot i (in start
                               order) uses URL i mod N, and the summary adds a row per URL
          --ca-file FILE       with wss:// or https://: trust the PEM CA certificates in FILE instead
                               of the system's (a test CA, or a self-signed server certificate)
          --insecure           with wss:// or https://: do not verify the server's certificate
          --room NAME          join one room
          --rooms N            spread the bots over N rooms (NAME-1 ... NAME-N; NAME defaults to roombot)
          --participants N     bots per room that each publish (as publishers do) and receive every
                               other participant's tracks, a video call: one participant with a
                               publisher and a subscriber transport on one WebSocket (like lk load-test;
                               with --layout, a grid). Publishers and subscribers then default to 0
          --publishers N       publishing bots per room (default 1; 0 with --participants)
          --subscribers N      subscribing bots per room (default 1; 0 with --participants)
          --audio-only         publish audio only
          --data-rate N        each publisher also sends N data channel messages a
                               second to its room; reports delivery and latency
          --simulcast          publish VP8 as three rid layers q/h/f (default)
          --no-simulcast       publish one VP8 stream
          --video-codec C      vp8 (default) or h264: publishers (room and WHIP) encode and offer C, WHEP
                               viewers offer C (H.264: constrained baseline 42e01f, packetization-mode 1)
          --duration DURATION  how long to run: 15s, 1m, 90 (seconds); 0 runs until Ctrl-C (default 30s)
          --ramp PER_SECOND    bots started per second (default 10)
          --dev                sign tokens with the development key (swiftlet serve --dev)
          --key K --secret S   sign tokens with this API key and secret
          --json FILE          write the summary as JSON
          --bind IP            local IP for the media sockets (default: the route to the server)
          --whip               publishers publish through WHIP (POST /whip/ROOM)
          --whep               subscribers play through WHEP (POST /whep/ROOM: the room's first publisher)
          --cache-dir DIR      where encoded VP8 clips are cached (default $XDG_CACHE_HOME/swiftlet-roombot
                               or ~/.cache/swiftlet-roombot)
          --switch-every DUR   subscribers cycle each video track's maxLayer 1, 2, 1, 0, ... this often
                               and time each switch to the first frame at the new resolution
          --no-media           join and connect only; send and check no media
          --connect-timeout D  keep retrying a failed TCP connect this long, then give up (default 10s);
                               also how long a bot whose room WebSocket dropped keeps reconnecting
                               (same URL and token: the server resumes it, or joins it afresh and the
                               bot renegotiates its media: a rejoin) before it counts signaling_closed
          --allow-errors       errors (signalling closed, ICE/DTLS failure, server errors) do not fail the run
          --wide               the summary table with every column (about 190 characters)
          --layout L           subscribers and participants view the room as L: speaker (one track at
                               1280 wide, the rest at 356), 3x3 (400), 4x4 (320), 5x5 (256), sent per
                               received video track as set-preference maxWidth
          --light              subscribers count received RTP from its header alone (loss from sequence
                               numbers, delay from abs-capture-time), decrypting and decoding only a
                               sample; they send RRs but no NACKs (see docs/ROOMBOT.md)
          --decode-every N     with --light: one subscriber in N decrypts and decodes (default 20; 0: none)
          --video-kbps K       publishers send a synthetic VP8 clip at K kbit/s (the top layer with
                               simulcast; the others K/3 and K/10), paced in real time
          --fps F              the clip's frame rate (default 30)
          --threads N          run the bots on N loops, each its own thread (default 1)
          --version            print the version

        THRESHOLDS (any one missed makes the exit status 1):
          --max-freeze D       longest a received track may deliver no frames or packets, a stall that
                               lasts to the end included (default 1.5s; a 2 s stall fails)
          --max-loss PERCENT   highest acceptable receive loss
          --max-join-ms MS     highest acceptable p95 join time
          --max-delay-ms MS    highest acceptable p95 end-to-end delay
          --min-bitrate KBPS   lowest acceptable mean receive bitrate per track

        EXIT STATUS:
          0   every bot joined and connected, every track flowed, no errors, every threshold met
          1   a threshold was missed (--max-freeze included)
          2   the run failed: a bot did not join, publish or connect, tracks were missing or never
              delivered, or an error happened (without --allow-errors)
          64  bad command line
          70  internal error (sockets, certificates)
          130 cut short by SIGINT (143: SIGTERM) before --duration ended; the summary is still printed
        """

    static func parse(_ arguments: [String]) throws(Invalid) -> BotOptions {
        var o = BotOptions()
        var room: String?
        var roomCount: Int?
        var dev = false
        var publishers: Int?
        var subscribers: Int?
        var decodeEvery: Int?
        var i = 0
        func value(_ name: String) throws(Invalid) -> String {
            i += 1
            guard i < arguments.count else { throw Invalid(description: "\(name) needs a value") }
            return arguments[i]
        }
        func count(_ name: String, min: Int = 0) throws(Invalid) -> Int {
            let v = try value(name)
            guard let n = Int(v), n >= min, n <= 100_000 else {
                throw Invalid(description: "\(name) wants a whole number from \(min), got '\(v)'")
            }
            return n
        }
        func number(_ name: String, min: Double = 0) throws(Invalid) -> Double {
            let v = try value(name)
            guard let n = Double(v), n.isFinite, n >= min else {
                throw Invalid(description: "\(name) wants a number from \(min), got '\(v)'")
            }
            return n
        }
        /// A duration in seconds: `15s`, `1m`, `500ms` or a bare number of
        /// seconds (Wire's one duration parser, as swiftlet's flags).
        func seconds(_ name: String) throws(Invalid) -> Double {
            let v = try value(name)
            guard let d = Duration(parsing: v) else {
                throw Invalid(description: "\(name) wants a duration like 15s, 1m, 500ms or 30 (seconds), got '\(v)'")
            }
            return d.inSeconds
        }
        while i < arguments.count {
            let a = arguments[i]
            switch a {
            case "--url":
                // Repeated, or a comma-separated list (a URL holds no comma
                // in its scheme, host or port).
                for part in try value(a).split(separator: ",", omittingEmptySubsequences: false) {
                    let server = try ServerURL(parsing: String(part))
                    guard !o.servers.contains(where: { $0.text == server.text }) else {
                        throw Invalid(description: "--url \(server.text) is given twice")
                    }
                    o.servers.append(server)
                }
                guard o.servers.count <= Self.maxServers else {
                    throw Invalid(description: "--url: at most \(Self.maxServers) URLs")
                }
            case "--ca-file": o.caFile = try value(a)
            case "--insecure": o.insecure = true
            case "--room": room = try value(a)
            case "--rooms": roomCount = try count(a, min: 1)
            case "--publishers": publishers = try count(a)
            case "--subscribers": subscribers = try count(a)
            case "--participants": o.participants = try count(a, min: 1)
            case "--audio-only": o.audioOnly = true
            case "--data-rate":
                o.dataRate = try number(a)
                guard o.dataRate >= 0, o.dataRate <= 1000 else {
                    throw Invalid(description: "--data-rate wants 0 to 1000 messages a second")
                }
            case "--simulcast": o.simulcast = true
            case "--no-simulcast": o.simulcast = false
            case "--video-codec":
                let v = try value(a)
                guard let codec = VideoCodecChoice(rawValue: v) else {
                    throw Invalid(description: "--video-codec wants vp8 or h264, got '\(v)'")
                }
                o.videoCodec = codec
            case "--duration": o.duration = try seconds(a)
            case "--ramp":
                o.ramp = try number(a)
                guard o.ramp > 0 else { throw Invalid(description: "--ramp must be above 0") }
            case "--dev": dev = true
            case "--key": o.key = try value(a)
            case "--secret": o.secret = try value(a)
            case "--json": o.jsonPath = try value(a)
            case "--bind": o.bind = try value(a)
            case "--whip": o.whip = true
            case "--whep": o.whep = true
            case "--max-loss": o.maxLossPercent = try number(a)
            case "--max-join-ms": o.maxJoinMilliseconds = try number(a)
            case "--max-delay-ms": o.maxDelayMilliseconds = try number(a)
            case "--min-bitrate": o.minBitrateKbps = try number(a)
            case "--cache-dir": o.cacheDirectory = try value(a)
            case "--switch-every":
                o.switchEvery = try seconds(a)
                guard (o.switchEvery ?? 0) > 0 else { throw Invalid(description: "--switch-every must be above 0") }
            case "--no-media": o.noMedia = true
            case "--max-freeze":
                o.maxFreezeSeconds = try seconds(a)
                guard o.maxFreezeSeconds > 0 else { throw Invalid(description: "--max-freeze must be above 0") }
            case "--allow-errors": o.allowErrors = true
            case "--connect-timeout":
                o.connectTimeout = try seconds(a)
                guard o.connectTimeout > 0 else { throw Invalid(description: "--connect-timeout must be above 0") }
            case "--wide": o.wideTable = true
            case "--layout":
                let v = try value(a)
                guard let layout = Layout(rawValue: v) else {
                    throw Invalid(description: "--layout wants speaker, 3x3, 4x4 or 5x5, got '\(v)'")
                }
                o.layout = layout
            case "--light": o.light = true
            case "--decode-every": decodeEvery = try count(a)
            case "--video-kbps": o.videoKbps = try count(a, min: 50)
            case "--fps": o.framesPerSecond = try count(a, min: 1)
            case "--threads": o.threads = try count(a, min: 1)
            default: throw Invalid(description: "unknown option '\(a)'; see roombot --help")
            }
            i += 1
        }
        guard !o.servers.isEmpty else { throw Invalid(description: "--url is required") }
        if !o.secure, o.caFile != nil || o.insecure {
            throw Invalid(description: "--ca-file and --insecure apply to wss:// and https:// URLs only")
        }
        if o.caFile != nil, o.insecure { throw Invalid(description: "--ca-file and --insecure exclude each other") }
        switch (room, roomCount) {
        case (let name?, nil): o.rooms = [name]
        case (let name, let n?): o.rooms = (1...n).map { "\(name ?? "roombot")-\($0)" }
        case (nil, nil): throw Invalid(description: "give --room NAME or --rooms N")
        }
        if let n = decodeEvery {
            guard o.light else { throw Invalid(description: "--decode-every applies to --light only") }
            o.decodeEvery = n
        }
        // 120 fps is the clip's limit (VideoClipEncoder); kbps is bounded
        // by `count` at 100,000, the encoder's 100 Mbit/s.
        if let f = o.framesPerSecond, f > 120 { throw Invalid(description: "--fps wants at most 120, got \(f)") }
        if o.videoKbps != nil || o.framesPerSecond != nil {
            guard !o.audioOnly, !o.noMedia else {
                throw Invalid(description: "--video-kbps and --fps shape the video clip; --audio-only and --no-media send none")
            }
            guard o.videoCodec == .vp8 else { throw Invalid(description: "--video-kbps and --fps encode VP8 only") }
        }
        if o.threads > 64 { throw Invalid(description: "--threads wants at most 64, got \(o.threads)") }
        if o.layout != nil, o.switchEvery != nil {
            throw Invalid(description: "--layout and --switch-every exclude each other (both set each track's layer)")
        }
        // The defaults (one of each) are for a run without participants.
        o.publishers = publishers ?? (o.participants > 0 ? 0 : 1)
        o.subscribers = subscribers ?? (o.participants > 0 ? 0 : 1)
        if o.participants > 0, o.whip || o.whep {
            throw Invalid(
                description:
                    "--participants publish and subscribe on one room WebSocket; --whip and --whep exclude it "
                    + "(a WHIP session only publishes, a WHEP one only plays)")
        }
        guard o.publishers + o.subscribers + o.participants > 0 else {
            throw Invalid(description: "no bots: give --participants, --publishers or --subscribers")
        }
        if dev {
            guard o.key.isEmpty, o.secret.isEmpty else {
                throw Invalid(description: "--dev and --key/--secret exclude each other")
            }
            o.key = Self.devKey
            o.secret = Self.devSecret
        } else if o.key.isEmpty || o.secret.isEmpty {
            throw Invalid(description: "give --dev, or --key and --secret")
        }
        return o
    }

    /// Whether the subscribing bot at `index` of the plan (0-based,
    /// counted over subscribing bots only) is light: all are with
    /// `--light` but the first of every `decodeEvery`.
    func isLight(subscriberIndex index: Int) -> Bool {
        light && (decodeEvery == 0 || index % decodeEvery != 0)
    }

    /// The tracks one bot of `role` should be offered: a room-protocol
    /// subscriber every publisher's and participant's audio (and video), a
    /// participant the same but its own (the server never offers a
    /// participant its own tracks), a WHEP subscriber those of the room's
    /// first publisher; publishers receive nothing. Only this process's
    /// bots are counted: tracks of bots from elsewhere are received and
    /// checked too, but not expected.
    func tracksExpected(for role: BotRole) -> Int {
        let perPublisher = audioOnly ? 1 : 2
        switch role {
        case .publisher: return 0
        case .participant: return (publishers + participants - 1) * perPublisher
        case .subscriber: return whep ? min(publishers, 1) * perPublisher : (publishers + participants) * perPublisher
        }
    }

    /// The `servers` index bot `index` (of `plan`) connects to: round
    /// robin, so every URL gets a share of each room's roles as far as the
    /// counts allow.
    func serverIndex(ofBot index: Int) -> Int { index % servers.count }

    /// The bots of one run, in start order: per room, participants and
    /// publishers first (so subscribers find tracks when they join), then
    /// subscribers.
    var plan: [(room: String, role: BotRole)] {
        rooms.flatMap { room in
            Array(repeating: (room, BotRole.participant), count: participants)
                + Array(repeating: (room, BotRole.publisher), count: publishers)
                + Array(repeating: (room, BotRole.subscriber), count: subscribers)
        }
    }
}

/// What a bot does in its room: publish only, subscribe only, or both
/// (`--participants`: one participant with a publisher and a subscriber
/// transport, as a browser in a video call).
enum BotRole: String, CaseIterable {
    case publisher, subscriber, participant

    var publishes: Bool { self != .subscriber }
    var subscribes: Bool { self != .publisher }
}
