import Cluster
import Foundation
import Negotiation
import RTP
import SDP
import Testing
import Wire

/// A shard record's JSON: real publishers' track descriptions survive it
/// unchanged, and every bound costs the record, never a crash.
@Suite struct RoomShardRecordTests {
    /// The publish offers the Negotiation tests use, read in place.
    static func tracks(_ fixture: String) throws -> [PublishedTrackDescription] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appending(path: "../SDPTests/Fixtures/\(fixture)")
        let offer = try PublishOffer(SessionDescription.parse(try String(contentsOf: url, encoding: .utf8)))
        // Every accepted section, sending or not: a record may carry both.
        return offer.sections.compactMap { if case .accepted(let t) = $0 { t } else { nil } }
    }

    static let fixtures = [
        "chromium-publish-simulcast.sdp", "chromium-publish-h264-simulcast.sdp", "chromium-sendrecv.sdp",
        "firefox-publish-simulcast-balanced.sdp", "firefox-publish-simulcast-max-bundle.sdp", "aiortc-offer.sdp",
        "gstreamer-publish-h264-max-bundle.sdp", "gstreamer-publish-vp8-max-compat.sdp",
    ]

    static func record(tracks: [PublishedTrackDescription], participants: Int = 1) -> RoomShardRecord {
        RoomShardRecord(
            room: "demo", node: NodeID(rawValue: "sfu-1~00000000000000aa"), epoch: 7,
            participants: (0..<participants).map { p in
                ShardParticipant(
                    id: "PA_\(p)", identity: "user \(p) é",
                    tracks: tracks.enumerated().map { i, d in
                        ShardTrack(id: "TR_\(p)_\(i)", relay: UInt32(p * 16 + i), description: d)
                    })
            },
            wants: [WantedTrack(trackID: "TR_far", node: NodeID(rawValue: "sfu-2~00000000000000bb"))])
    }

    @Test(arguments: fixtures) func realPublishOffersRoundTrip(_ fixture: String) throws {
        let tracks = try Self.tracks(fixture)
        #expect(!tracks.isEmpty)
        let record = Self.record(tracks: tracks)
        let bytes = try #require(record.encoded())
        #expect(RoomShardRecord(decoding: bytes) == record)
    }

    /// The fixtures hold what the mirror must carry: rid simulcast, RTX,
    /// transport-cc, extmaps, SSRC groups, H.264 fmtp, Opus without fmtp
    /// (aiortc).
    @Test func theFixturesCoverEveryPartOfADescription() throws {
        let chromium = try Self.tracks("chromium-publish-simulcast.sdp")
        let video = try #require(chromium.first { $0.kind == .video })
        #expect(video.simulcast.map(\.rid) == ["q", "h", "f"])
        #expect(video.codecs.contains { $0.rtxPayloadType != nil })
        #expect(video.codecs.contains { $0.feedback.contains(.transportCC) })
        #expect(video.headerExtensions.rtpStreamID != nil && !video.extensionMaps.isEmpty)
        #expect(video.msid != nil)
        let h264 = try Self.tracks("chromium-publish-h264-simulcast.sdp")
        #expect(h264.contains { $0.codecs.first?.codec == .video(.h264) && $0.codecs.first?.formatParameters != nil })
        let sendrecv = try Self.tracks("chromium-sendrecv.sdp")
        #expect(sendrecv.contains { $0.sources?.streams.contains { $0.rtxSSRC != nil } == true })
        let aiortc = try Self.tracks("aiortc-offer.sdp")
        #expect(aiortc.contains { $0.kind == .audio && $0.codecs.first?.formatParameters == nil })
        let firefox = try Self.tracks("firefox-publish-simulcast-balanced.sdp")
        #expect(firefox.contains { !$0.simulcast.isEmpty })
    }

    /// Fields a fixture happens not to use: paused layers, layer payload
    /// types, an extmap direction and attributes, every extension id, no
    /// msid track, signalled SIM groups.
    @Test func aHandBuiltDescriptionWithEveryOptionalFieldRoundTrips() throws {
        let d = PublishedTrackDescription(
            mid: "sixteen-byte-mid", kind: .video, direction: .sendrecv, msid: MediaStreamID(streamID: "-"),
            codecs: [
                .vp8(payloadType: PayloadType(rawValue: 96)!, rtxPayloadType: PayloadType(rawValue: 97)!),
                CodecDescription(codec: .video(.av1), payloadType: PayloadType(rawValue: 127)!, clockRate: 90000),
                CodecDescription(codec: .video(.vp9), payloadType: PayloadType(rawValue: 0)!, clockRate: 90000),
            ],
            simulcast: [
                SimulcastLayer(
                    rid: "a", paused: true, payloadTypes: [PayloadType(rawValue: 96)!],
                    restrictions: [.init(name: "max-width", value: "320"), .init(name: "flag", value: nil)])
            ],
            sources: SignalledSources(
                cname: nil, streams: [.init(ssrc: SSRC(0)), .init(ssrc: SSRC(.max), rtxSSRC: SSRC(7))], isSimulcast: true),
            headerExtensions: HeaderExtensionIDs(
                mid: 1, rtpStreamID: 2, repairedRTPStreamID: 3, absoluteSendTime: 4, transportWideSequenceNumber: 5,
                audioLevel: 6, videoOrientation: 7, absoluteCaptureTime: 255),
            extensionMaps: [ExtensionMap(id: 200, direction: .recvonly, uri: "urn:x", attributes: ["a", "b"])],
            reducedSizeRTCP: true)
        let record = Self.record(tracks: [d])
        #expect(RoomShardRecord(decoding: try #require(record.encoded())) == record)
    }

    /// A whole room at the rooms layer's default size (`participantsPerRoom`
    /// 100) of Chromium publishers (audio, and three-layer simulcast video
    /// in VP8 or H.264) on one node fits `maxEncodedBytes`: the byte bound
    /// binds before the participant bound for publishers, not for
    /// participants who only watch. Measured: 2,177 bytes per participant
    /// (VP8), 2,273 (H.264); 100 participants 202,381 and 211,981 bytes.
    @Test(arguments: ["chromium-publish-simulcast.sdp", "chromium-publish-h264-simulcast.sdp"])
    func aDefaultSizeRoomOfPublishersFitsOneRecord(_ fixture: String) throws {
        let tracks = try Self.tracks(fixture)
        let room = try #require(Self.record(tracks: tracks, participants: 100).encoded())
        #expect(room.count > 100 * 2000)
    }

    @Test func countsPastTheirBoundsCostTheRecord() throws {
        typealias B = RoomShardRecord.Bounds
        let audio = try #require(try Self.tracks("aiortc-offer.sdp").first { $0.kind == .audio })
        let node = NodeID(rawValue: "n")
        func refused(_ record: RoomShardRecord) throws {
            #expect(record.encoded() == nil)
            // Written anyway (as another version might): unreadable.
            #expect(RoomShardRecord(decoding: Array(try JSONEncoder().encode(record))) == nil)
        }
        let atBound = RoomShardRecord(
            room: "r", node: node, epoch: 1,
            participants: (0..<B.maxParticipants).map { ShardParticipant(id: "\($0)", identity: "") },
            wants: (0..<B.maxWants).map { WantedTrack(trackID: "\($0)", node: node) })
        #expect(RoomShardRecord(decoding: try #require(atBound.encoded())) == atBound)
        var tooMany = atBound
        tooMany.participants.append(ShardParticipant(id: "x", identity: ""))
        try refused(tooMany)
        tooMany = atBound
        tooMany.wants.append(WantedTrack(trackID: "x", node: node))
        try refused(tooMany)
        let track = ShardTrack(id: "t", relay: 1, description: audio)
        let tracks = RoomShardRecord(
            room: "r", node: node, epoch: 1,
            participants: [ShardParticipant(id: "p", identity: "", tracks: Array(repeating: track, count: 17))])
        try refused(tracks)
        let long = String(repeating: "é", count: 129)  // 258 bytes
        try refused(RoomShardRecord(room: long, node: node, epoch: 1))
        try refused(
            RoomShardRecord(room: "r", node: node, epoch: 1, participants: [ShardParticipant(id: "p", identity: long)]))
    }

    @Test func aDescriptionPastItsBoundsCannotBeWrittenNorRead() throws {
        var audio = try #require(try Self.tracks("chromium-publish-simulcast.sdp").first { $0.kind == .audio })
        audio.codecs[0].formatParameters = String(repeating: "x", count: RoomShardRecord.Bounds.maxFormatParametersBytes + 1)
        let record = Self.record(tracks: [audio])
        #expect(record.encoded() == nil)
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(record) }
        // The same bytes as a reader could find them (written by hand).
        audio.codecs[0].formatParameters = "minptime=10"
        let bytes = try #require(Self.record(tracks: [audio]).encoded())
        let damaged = String(decoding: bytes, as: UTF8.self).replacingOccurrences(
            of: "minptime=10", with: String(repeating: "x", count: RoomShardRecord.Bounds.maxFormatParametersBytes + 1))
        #expect(RoomShardRecord(decoding: Array(damaged.utf8)) == nil)
    }

    /// Values no description can hold: the record is unreadable, not a
    /// track with a made-up field.
    @Test(arguments: [
        (#""payloadType":111"#, #""payloadType":128"#),  // PT is 7 bits
        (#""codec":"opus""#, #""codec":"PCMU""#),
        (#""kind":"audio""#, #""kind":"text""#),
        (#""direction":"sendonly""#, #""direction":"sideways""#),
        (#""mid":"0""#, #""mid":"seventeen-bytes-x""#),  // a MID is at most 16 bytes
        (#""mid":"0""#, #""mid":"""#),
        (#""relay":0"#, #""relay":-1"#),
        (#""epoch":7"#, #""epoch":"7""#),
    ])
    func fieldsThatDoNotConvertCostTheRecord(_ edit: (String, String)) throws {
        let audio = try #require(try Self.tracks("chromium-publish-simulcast.sdp").first { $0.kind == .audio })
        let text = String(decoding: try #require(Self.record(tracks: [audio]).encoded()), as: UTF8.self)
        #expect(text.contains(edit.0))
        #expect(RoomShardRecord(decoding: Array(text.replacingOccurrences(of: edit.0, with: edit.1).utf8)) == nil)
    }

    @Test func bytesThatAreNotARecordAreNil() {
        #expect(RoomShardRecord(decoding: []) == nil)
        #expect(RoomShardRecord(decoding: Array("{}".utf8)) == nil)
        #expect(RoomShardRecord(decoding: Array("null".utf8)) == nil)
        #expect(RoomShardRecord(decoding: [0xFF, 0xFE, 0x00]) == nil)
        #expect(RoomShardRecord(decoding: Array(String(repeating: "[", count: 100_000).utf8)) == nil)
        // Past the byte bound before anything is parsed: spaces around a
        // valid record.
        let valid = RoomShardRecord(room: "r", node: NodeID(rawValue: "n"), epoch: 1).encoded()!
        #expect(RoomShardRecord(decoding: valid) != nil)
        let padded = valid + [UInt8](repeating: 0x20, count: RoomShardRecord.Bounds.maxEncodedBytes + 1 - valid.count)
        #expect(RoomShardRecord(decoding: padded) == nil)
        #expect(RoomShardRecord(decoding: Array(padded.dropLast())) != nil)
    }
}
