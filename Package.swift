// swift-tools-version:6.2
// Swiftlet: a WebRTC SFU for Linux. The target graph is the architecture
// (docs/ARCHITECTURE.md): arrows point only down, protocol targets are
// sans-IO and never import sockets, threads or the clock.
import PackageDescription

// Span-based parsers keep a `RawSpan` inside a non-escapable reader, which
// needs lifetime annotations (`@_lifetime`), still experimental in Swift 6.3.
let swiftSettings: [SwiftSetting] = [
    .enableExperimentalFeature("Lifetimes")
]

// The media path's targets leave out the dynamic exclusivity checks
// (SE-0176) in release builds: every access to a class's stored property
// on a worker's packet path went through swift_beginAccess, about 2 % of
// a worker's CPU at 40 subscribers (perf, docs/PERFORMANCE.md). The
// static checks stay, and debug builds (the whole suite runs in both)
// keep the dynamic ones.
let mediaPathSettings =
    swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
let mediaPathTargets: Set<String> = [
    "ICE", "SRTP", "RTPStreams", "Forwarding", "LossRecovery", "BandwidthEstimation", "MediaRouter", "PeerSession",
    "NetIO", "MediaWorker",
]

func protocolTarget(_ name: String, _ deps: [Target.Dependency]) -> Target {
    // Each protocol target carries a README.md for readers, not for the build.
    .target(
        name: name, dependencies: deps, exclude: ["README.md"],
        swiftSettings: mediaPathTargets.contains(name) ? mediaPathSettings : swiftSettings)
}

func testTarget(_ name: String, _ deps: [Target.Dependency], resources: [Resource]? = nil) -> Target {
    .testTarget(name: name, dependencies: deps, resources: resources, swiftSettings: swiftSettings)
}

let package = Package(
    name: "Swiftlet",
    products: [
        .executable(name: "swiftlet", targets: ["SwiftletServer"]),
        .executable(name: "roombot", targets: ["RoomBot"]),
        // Library products let the separate fuzzing package (Fuzz/) link the parsers.
        .library(name: "Wire", targets: ["Wire"]),
        .library(name: "FuzzEntryPoints", targets: ["FuzzEntryPoints"]),
    ],
    targets: [
        // C libraries from Debian, through pkg-config.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CVPX", pkgConfig: "vpx", providers: [.apt(["libvpx-dev"])]),
        .systemLibrary(name: "COpenH264", pkgConfig: "openh264", providers: [.apt(["libopenh264-dev"])]),
        // FFmpeg's container writer for recordings (docs/RECORDING.md);
        // libavformat.pc pulls in libavcodec and libavutil.
        .systemLibrary(
            name: "CAVFormat", pkgConfig: "libavformat", providers: [.apt(["libavformat-dev", "libavcodec-dev"])]),
        // No pkgConfig: hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM
        // refuses (a warning per build); the header is <hiredis/hiredis.h>.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        // One-line C wrappers for what Swift cannot import: function-like
        // macros, variadic calls, recvmmsg/sendmmsg.
        .target(name: "CShim", dependencies: ["COpenSSL", "COpus"]),
        // SCTP for data channels (RFC 8261): usrsctp in its conn mode, no
        // sockets or threads of its own; the C half of its callbacks and
        // socket options.
        // No pkgConfig: usrsctp.pc adds -DINET -DINET6, which SwiftPM
        // refuses (a warning per build) and usrsctp.h does not use.
        .systemLibrary(name: "CUsrsctp", providers: [.apt(["libusrsctp-dev"])]),
        .target(name: "CSCTPShim", dependencies: ["CUsrsctp"], linkerSettings: [.linkedLibrary("usrsctp")]),

        // Base.
        protocolTarget("Wire", []),
        protocolTarget("CryptoPrimitives", ["COpenSSL", "CShim"]),

        // Wire formats: sans-IO, parse in place.
        protocolTarget("STUN", ["Wire", "CryptoPrimitives"]),
        protocolTarget("RTP", ["Wire"]),
        protocolTarget("RTCP", ["Wire"]),
        protocolTarget("Codecs", ["Wire"]),
        protocolTarget("SDP", ["Wire"]),

        // Secure transport: sans-IO state over the C libraries.
        protocolTarget("ICE", ["Wire", "STUN", "CryptoPrimitives"]),
        protocolTarget("SRTP", ["Wire", "CSRTP", "CShim"]),
        protocolTarget("DTLS", ["Wire", "CryptoPrimitives", "COpenSSL", "CShim"]),
        // TLS over a byte stream (HTTPS, WSS) on memory BIOs.
        protocolTarget("TLS", ["CryptoPrimitives", "COpenSSL", "CShim"]),
        // Data channels: one SCTP association over DTLS on usrsctp
        // (RFC 8261), and DCEP with the channel table (RFC 8831, 8832),
        // pure and fuzzable.
        protocolTarget("SCTP", ["CSCTPShim", "Wire", "DataChannel"]),
        protocolTarget("DataChannel", ["Wire"]),
        // The TURN server's engine (RFC 8656): allocations, permissions,
        // channels, REST-API credentials; sans-IO.
        protocolTarget("TURN", ["Wire", "STUN", "CryptoPrimitives", "Signaling"]),

        // RTP stream state (reception statistics, reports) and forwarding
        // decisions as pure values.
        protocolTarget("RTPStreams", ["Wire", "RTP", "RTCP"]),
        protocolTarget("Forwarding", ["Wire", "RTP", "RTCP", "Codecs"]),
        // Loss recovery (retransmission buffer, NACK generation, RTX) and
        // send-side bandwidth estimation with the per-subscriber allocator.
        protocolTarget("LossRecovery", ["Wire", "RTP"]),
        protocolTarget("BandwidthEstimation", ["Wire", "RTCP"]),

        // Signalling: HTTP/1.1, WebSocket, access tokens; SDP negotiation.
        protocolTarget("Signaling", ["Wire", "CryptoPrimitives"]),
        protocolTarget("Negotiation", ["Wire", "SDP", "ICE", "DTLS", "RTP", "Codecs"]),

        // The JSON room protocol (docs/PROTOCOL.md): its messages and their
        // bounded codec, spoken by the server and by roombot.
        protocolTarget("RoomProtocol", []),
        // Domain: rooms, participants, calls, mesh relay; who forwards what to whom.
        protocolTarget("Rooms", ["Wire", "SDP", "Negotiation", "ICE", "DTLS", "RoomProtocol", "WorkerRelay"]),
        // Webhook events, their signature and the delivery queue's policy (docs/API.md).
        protocolTarget("Webhooks", ["Wire", "CryptoPrimitives", "Signaling", "Rooms", "RoomProtocol"]),

        // The cluster (issue #15): node records, room placement and the
        // Redis protocol (hiredis's reader and formatter, bounded), a
        // cascaded room's shard records (tracks as Negotiation describes
        // them); sans-IO.
        protocolTarget("Cluster", ["CHiredis", "Negotiation", "SDP", "RTP", "Codecs", "Wire"]),

        // What crosses between media workers when a room spans them.
        protocolTarget("WorkerRelay", ["Wire"]),
        // The sans-IO media core: a worker's rooms, tracks from sources to
        // sinks (docs/ARCHITECTURE.md).
        protocolTarget(
            "MediaRouter",
            [
                "Wire", "RTP", "RTCP", "Codecs", "Forwarding", "RTPStreams", "LossRecovery", "BandwidthEstimation", "PeerSession",
                "Rooms", "RoomProtocol", "Negotiation", "ICE", "DTLS", "SRTP", "WorkerRelay", "SCTP", "DataChannel",
            ]),

        // Composition: one remote peer's secure transport and the receive
        // side of its RTP streams, shared by the server and roombot.
        protocolTarget(
            "PeerSession",
            [
                "Wire", "STUN", "ICE", "DTLS", "SRTP", "RTP", "RTCP", "RTPStreams", "LossRecovery", "BandwidthEstimation",
                "SCTP", "DataChannel",
            ]),

        // Test support: virtual clock, packet builders.
        protocolTarget("SFUTesting", ["Wire", "RTP", "RTCP", "STUN", "Codecs", "ICE", "DTLS", "SRTP", "PeerSession"]),

        // Parser entry points shared by the libFuzzer binaries (Fuzz/) and the
        // corpus replay test, so both exercise exactly the same code.
        protocolTarget(
            "FuzzEntryPoints",
            [
                "Wire", "STUN", "RTP", "RTCP", "Codecs", "SDP", "Signaling", "DTLS", "TLS", "ICE", "Negotiation",
                "BandwidthEstimation",
                "BotMedia", "TURN", "RoomProtocol", "WorkerRelay", "SRTP", "Cluster", "DataChannel",
            ]),

        // Edge: the only target with sockets (and, later, epoll, threads and
        // the real clock).
        .target(name: "NetIO", dependencies: ["CShim", "Wire", "TLS"], swiftSettings: mediaPathSettings),

        // A node's membership in the cluster: its Redis connection and the
        // thread that keeps its record alive.
        .target(
            name: "ClusterService", dependencies: ["Cluster", "NetIO", "Wire"], exclude: ["README.md"],
            swiftSettings: swiftSettings),

        // The built-in TURN server's sockets and thread (docs/TRANSPORT.md).
        .target(
            name: "TURNService", dependencies: ["NetIO", "TURN", "TLS", "Wire", "CShim", "CryptoPrimitives"],
            swiftSettings: swiftSettings),

        // The worker engine that owns a worker's peer transports.
        .target(
            name: "MediaWorker",
            dependencies: [
                "NetIO", "PeerSession", "SRTP", "Wire", "RTP", "RTCP", "Codecs", "Forwarding", "RTPStreams", "Rooms",
                "RoomProtocol", "Negotiation", "ICE", "DTLS", "LossRecovery", "BandwidthEstimation", "MediaRouter", "WorkerRelay",
            ], exclude: ["README.md"], swiftSettings: mediaPathSettings),

        // The recorder (docs/RECORDING.md): its thread drains the workers'
        // recorder rings, runs Recording's decisions and writes WebM files
        // with libavformat.
        .target(
            name: "MediaRecorder",
            dependencies: [
                "MediaWorker", "MediaRouter", "WorkerRelay", "Recording", "Negotiation", "RoomProtocol", "Rooms", "NetIO", "Wire",
                "CAVFormat",
            ],
            exclude: ["README.md"], swiftSettings: swiftSettings),

        // HTTP and room-WebSocket clients over NetIO's TCP client socket (plain
        // or TLS): roombot's connections, and a node proxying a client to another.
        .target(
            name: "HTTPClient", dependencies: ["NetIO", "Signaling", "TLS", "Wire"], exclude: ["README.md"],
            swiftSettings: swiftSettings),

        // The signalling server: HTTP/WebSocket over NetIO's TCP shell, hosting Rooms.
        // Web/ (the browser client, docs/WEB_CLIENT.md) is compiled into the binary.
        .target(
            name: "SignalingServer",
            dependencies: [
                "NetIO", "Signaling", "Rooms", "RoomProtocol", "SDP", "CryptoPrimitives", "Wire", "TLS", "HTTPClient", "Webhooks",
            ],
            resources: [.embedInCode("Web")], swiftSettings: swiftSettings),

        // Apps.
        .executableTarget(
            name: "SwiftletServer",
            dependencies: [
                "Wire", "NetIO", "MediaWorker", "MediaRecorder", "MediaRouter", "PeerSession", "DTLS", "SRTP", "Signaling",
                "SignalingServer", "Rooms", "RoomProtocol", "TLS", "TURN", "TURNService", "Cluster", "ClusterService", "ICE",
                "HTTPClient", "Webhooks",
            ],
            swiftSettings: swiftSettings),
        // roombot's media: real Opus and VP8 encoded once and looped,
        // packetized; received media checked (no I/O).
        protocolTarget("BotMedia", ["Wire", "RTP", "Codecs", "CShim", "COpus", "CVPX", "COpenH264"]),
        // What a recorder decides (docs/RECORDING.md): jitter buffer, Sender
        // Report clock, layer choice, frames and the file's timeline; sans-IO.
        protocolTarget("Recording", ["Wire", "RTP", "Codecs", "BotMedia"]),
        .executableTarget(
            name: "RoomBot",
            dependencies: [
                "Wire", "CShim", "COpus", "CVPX", "BotMedia", "Codecs", "NetIO", "Signaling", "Negotiation", "PeerSession", "ICE",
                "DTLS", "SRTP", "RTP", "RTCP", "RTPStreams", "SDP", "LossRecovery", "Forwarding", "TLS", "RoomProtocol",
                "BandwidthEstimation", "HTTPClient", "SCTP", "DataChannel",
            ], exclude: ["README.md"],
            swiftSettings: swiftSettings),

        // Test support: network namespaces for the tests that need more
        // than loopback (Sources/NamespaceTesting/README.md).
        // Test support: a real redis-server for one test (Sources/RedisTesting).
        .target(name: "RedisTesting", dependencies: [], swiftSettings: swiftSettings),
        .target(name: "NamespaceTesting", dependencies: ["NetIO"], exclude: ["README.md"], swiftSettings: swiftSettings),

        // Benchmarks (Scripts/bench-*), never part of a test run.
        .executableTarget(
            name: "TransportBench", dependencies: ["SRTP", "NetIO", "Wire", "RTCP", "BandwidthEstimation"],
            swiftSettings: swiftSettings),

        // Tests: one target per target.
        testTarget("WireTests", ["Wire"]),
        testTarget("CryptoPrimitivesTests", ["CryptoPrimitives"]),
        testTarget("STUNTests", ["STUN", "Wire", "SFUTesting"]),
        testTarget("TURNTests", ["TURN", "STUN", "Wire", "CryptoPrimitives", "SFUTesting"]),
        testTarget("RTPTests", ["RTP", "Wire", "SFUTesting"]),
        testTarget("RTCPTests", ["RTCP", "Wire", "SFUTesting"]),
        testTarget("CodecsTests", ["Codecs", "Wire", "SFUTesting"]),
        testTarget("SDPTests", ["SDP", "Wire"], resources: [.copy("Fixtures")]),
        testTarget("CShimTests", ["CShim", "COpenSSL", "COpus", "CVPX", "CSRTP"]),
        testTarget("FuzzEntryPointsTests", ["FuzzEntryPoints"]),
        testTarget("NetIOTests", ["NetIO"]),
        testTarget(
            "SwiftletServerTests",
            [
                "SwiftletServer", "Signaling", "MediaWorker", "MediaRouter", "RoomBot", "Wire", "RTP", "RTCP", "NetIO",
                "Negotiation", "SDP", "MediaRecorder", "SignalingServer", "Rooms", "RoomProtocol",
                "DTLS", "ICE", "PeerSession", "TLS", "SFUTesting", "RedisTesting", "HTTPClient", "Cluster", "NamespaceTesting",
            ]),
        testTarget(
            "SignalingServerTests",
            [
                "SignalingServer", "Signaling", "Rooms", "RoomProtocol", "NetIO", "Wire", "TLS", "DTLS", "SFUTesting",
                "HTTPClient", "Webhooks",
            ]),
        testTarget(
            "MediaWorkerTests",
            [
                "MediaWorker", "MediaRouter", "NetIO", "PeerSession", "SRTP", "Wire", "RTP", "RTCP", "Codecs", "Forwarding",
                "RTPStreams", "Rooms", "RoomProtocol", "Negotiation", "ICE", "DTLS", "SDP", "SFUTesting", "NamespaceTesting",
                "WorkerRelay",
            ]),
        testTarget("RTPStreamsTests", ["RTPStreams", "RTP", "RTCP", "Wire", "SFUTesting"]),
        testTarget("ForwardingTests", ["Forwarding", "RTP", "RTCP", "Codecs", "Wire", "SFUTesting"]),
        testTarget("LossRecoveryTests", ["LossRecovery", "RTP", "Wire", "SFUTesting"]),
        testTarget("BandwidthEstimationTests", ["BandwidthEstimation", "RTCP", "Wire", "SFUTesting"]),
        testTarget("BotMediaTests", ["BotMedia", "RTP", "RTCP", "Codecs", "Wire"]),
        testTarget("RecordingTests", ["Recording", "BotMedia", "Wire"]),
        testTarget("SignalingTests", ["Signaling", "Wire", "CryptoPrimitives"]),
        testTarget("NegotiationTests", ["Negotiation", "SDP", "ICE", "DTLS", "RTP", "Codecs", "Wire"]),
        testTarget("RoomsTests", ["Rooms", "RoomProtocol", "Wire", "SFUTesting", "Negotiation", "WorkerRelay", "SDP"]),
        testTarget("RoomProtocolTests", ["RoomProtocol"]),
        testTarget("WebhooksTests", ["Webhooks", "Rooms", "RoomProtocol", "Signaling", "Wire"]),
        testTarget("WorkerRelayTests", ["WorkerRelay", "Wire"]),
        testTarget(
            "MediaRouterTests",
            [
                "MediaRouter", "WorkerRelay", "Rooms", "RoomProtocol", "Negotiation", "Wire", "RTP", "RTCP", "Codecs",
                "PeerSession", "SFUTesting",
                "DTLS", "ICE", "SDP", "SRTP", "RTPStreams",
            ]),
        testTarget("ClusterTests", ["Cluster", "Negotiation", "SDP", "RTP", "Codecs", "Wire"]),
        testTarget(
            "ClusterServiceTests", ["ClusterService", "Cluster", "NetIO", "Wire", "RedisTesting", "Negotiation", "SDP", "RTP"]),
        testTarget(
            "PeerSessionTests",
            ["PeerSession", "ICE", "DTLS", "SRTP", "RTP", "RTCP", "Wire", "SFUTesting", "SCTP", "DataChannel"]),
        testTarget("ICETests", ["ICE", "STUN", "Wire", "SFUTesting"]),
        testTarget("SRTPTests", ["SRTP", "Wire", "SFUTesting", "CShim"]),
        testTarget("DTLSTests", ["DTLS", "Wire", "SFUTesting"], resources: [.copy("Fixtures")]),
        testTarget("TLSTests", ["TLS", "DTLS", "CryptoPrimitives"]),
        testTarget("SCTPTests", ["SCTP", "DataChannel", "Wire"]),
        testTarget("DataChannelTests", ["DataChannel", "Wire"]),
        testTarget(
            "InteropTests",
            [
                "SwiftletServer", "Rooms", "RoomProtocol", "Signaling", "SignalingServer", "MediaWorker", "MediaRouter", "NetIO",
                "PeerSession", "DTLS", "ICE", "SRTP", "SDP", "RTP", "Wire", "SFUTesting", "TLS", "TURN", "TURNService",
                "NamespaceTesting",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
