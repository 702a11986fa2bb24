// swift-tools-version:6.2
// libFuzzer binaries, one per parser. A separate package so that the main
// package's normal build never links an executable without `main`. Build and
// run through Scripts/fuzz:
//   swift build --package-path Fuzz -c release --sanitize=fuzzer --sanitize=address
import PackageDescription

let entries = [
    "STUN": "stun", "RTP": "rtp", "RTCP": "rtcp", "SDP": "sdp", "Codecs": "codecs", "HTTP": "http", "WebSocket": "websocket",
    "RTX": "rtx", "VP8KeyframeHeader": "vp8KeyframeHeader", "WebSocketClient": "websocketClient", "TLSServer": "tlsServer",
    "TransportFeedback": "transportFeedback", "Negotiation": "negotiation",
    "StreamFraming": "streamFraming", "H264Depacketizer": "h264Depacketizer", "TURN": "turn", "RoomProtocol": "roomProtocol",
    "RelayMessage": "relayMessage", "SRTP": "srtp", "RedisReply": "redisReply", "RoomShardRecord": "roomShardRecord",
    "DataChannelMessage": "dataChannelMessage",
]

let package = Package(
    name: "SwiftletFuzz",
    dependencies: [.package(name: "Swiftlet", path: "..")],
    targets: entries.keys.sorted().map { name in
        .executableTarget(
            name: "Fuzz\(name)",
            dependencies: [.product(name: "FuzzEntryPoints", package: "Swiftlet")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    },
    swiftLanguageModes: [.v6]
)
