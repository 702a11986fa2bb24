import FoundationEssentials
import Negotiation

/// One node's part of a cascaded room (issue #15, "Cascade"): the
/// participants it serves, the tracks they publish, and the remote tracks
/// its subscribers receive. Each node serving part of a room rewrites its
/// record at every refresh under `ClusterKeys.shard(room:node:)`, expiring
/// with its node record (`ClusterTiming.recordLifetime`); the other nodes
/// of the room read it to show the far participants and to plan the node
/// relays. JSON, as `NodeRecord`.
///
/// The `epoch` is the room's placement epoch the writer holds: a reader
/// compares it for equality with the room's home, as homes are compared
/// (`RoomClaims`), and a record of another epoch belongs to a stale copy.
package struct RoomShardRecord: Equatable, Codable, Sendable {
    package var room: String
    package var node: NodeID
    package var epoch: Int64
    package var participants: [ShardParticipant]
    /// The remote tracks this node's subscribers receive now: what the
    /// source nodes relay here.
    package var wants: [WantedTrack]

    package init(
        room: String, node: NodeID, epoch: Int64, participants: [ShardParticipant] = [], wants: [WantedTrack] = []
    ) {
        self.room = room
        self.node = node
        self.epoch = epoch
        self.participants = participants
        self.wants = wants
    }

    /// The bytes a writer stores, or nil when the record breaks one of
    /// `Bounds` (readers would refuse it: the writer must shed what it
    /// cannot advertise rather than write a record nobody reads).
    package func encoded() -> [UInt8]? {
        guard isWithinBounds else { return nil }
        let encoder = JSONEncoder()
        // URIs are most of a track's bytes: `/` is not escaped.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let bytes = try? Array(encoder.encode(self)), bytes.count <= Bounds.maxEncodedBytes else { return nil }
        return bytes
    }

    /// Nil for bytes that are not a record within `Bounds` (too large, too
    /// many of something, a string too long, a track description that does
    /// not convert, another version's): bad input costs this record, never
    /// a crash. The byte bound is checked before anything is parsed.
    package init?(decoding bytes: [UInt8]) {
        guard bytes.count <= Bounds.maxEncodedBytes,
            let r = try? JSONDecoder().decode(RoomShardRecord.self, from: Data(bytes)), r.isWithinBounds
        else { return nil }
        self = r
    }

    /// The counts and string lengths of this record (the track
    /// descriptions' own are checked as they are encoded and decoded).
    var isWithinBounds: Bool {
        typealias B = Bounds
        guard B.fits(room), B.fits(node.rawValue), participants.count <= B.maxParticipants, wants.count <= B.maxWants
        else { return false }
        for p in participants {
            guard B.fits(p.id), B.fits(p.identity), p.tracks.count <= B.maxTracksPerParticipant,
                p.tracks.allSatisfy({ B.fits($0.id) })
            else { return false }
        }
        return wants.allSatisfy { B.fits($0.trackID) && B.fits($0.node.rawValue) }
    }
}

/// A participant a shard serves, with the tracks it publishes there.
package struct ShardParticipant: Equatable, Codable, Sendable {
    /// The room protocol's participant id (`ParticipantID.rawValue`).
    package var id: String
    package var identity: String
    package var tracks: [ShardTrack]

    package init(id: String, identity: String, tracks: [ShardTrack] = []) {
        self.id = id
        self.identity = identity
        self.tracks = tracks
    }
}

/// A published track as a far node needs it: its id in the room, the
/// `RelayTrackID` the source node gives it on node relays (so a far node
/// that wants it names it, and recognises its packets), and its
/// description.
package struct ShardTrack: Equatable, Codable, Sendable {
    package var id: String
    /// `RelayTrackID.rawValue` on the source node's relays.
    package var relay: UInt32
    package var description: PublishedTrackDescription

    package init(id: String, relay: UInt32, description: PublishedTrackDescription) {
        self.id = id
        self.relay = relay
        self.description = description
    }

    enum CodingKeys: String, CodingKey { case id, relay, description }

    /// Fails (and with it the whole record) when the stored description
    /// breaks a bound or a type's invariant.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        relay = try c.decode(UInt32.self, forKey: .relay)
        let stored = try c.decode(StoredTrackDescription.self, forKey: .description)
        guard stored.isWithinBounds, let description = stored.description() else {
            throw DecodingError.dataCorruptedError(
                forKey: .description, in: c, debugDescription: "not a track description within the record's bounds")
        }
        self.description = description
    }

    package func encode(to encoder: any Encoder) throws {
        let stored = StoredTrackDescription(description)
        var c = encoder.container(keyedBy: CodingKeys.self)
        guard stored.isWithinBounds else {
            throw EncodingError.invalidValue(
                description, .init(codingPath: c.codingPath, debugDescription: "past the record's bounds"))
        }
        try c.encode(id, forKey: .id)
        try c.encode(relay, forKey: .relay)
        try c.encode(stored, forKey: .description)
    }
}

/// A remote track this node's subscribers receive: the track's id and the
/// node that serves its publisher (where the relay comes from).
package struct WantedTrack: Hashable, Codable, Sendable {
    package var trackID: String
    package var node: NodeID

    package init(trackID: String, node: NodeID) {
        self.trackID = trackID
        self.node = node
    }
}

extension RoomShardRecord {
    /// What a record may hold; a record past any of them is unreadable
    /// (`init?(decoding:)`) and unwritable (`encoded()`).
    ///
    /// Where the rooms layer bounds a count, the bound here is at least its
    /// default (Sources/Rooms/RoomLimits.swift) with room for a node
    /// configured higher: 16 tracks per participant is `sectionsPerOffer`
    /// (`tracksPerParticipant` is 8); 500 participants is five rooms'
    /// worth at `participantsPerRoom` 100 (one node's part of one room is
    /// at most the room). The rest have no rooms-layer limit and are sized
    /// from what browsers send, with margin: Chromium accepts at most a few
    /// codecs per section after `PublishOffer` keeps only Opus, VP8 and
    /// H.264 mode 1, three layers, five kinds of feedback, about fifteen
    /// `a=extmap`s.
    package enum Bounds {
        /// Bytes of one stored record, checked before it is parsed. For
        /// publishers it binds before `maxParticipants`: a Chromium
        /// publisher (audio and three-layer simulcast video) takes about
        /// 2.2 KB, so a record holds about 115 of them, a default-size room
        /// (100) with margin. `RoomShardRead` reads 32 records per `MGET`,
        /// so one reply fits the reply reader's 8 MiB of unread bytes.
        package static let maxEncodedBytes = 256 * 1024
        package static let maxParticipants = 500
        package static let maxTracksPerParticipant = 16
        /// Remote tracks this node receives, each once however many of its
        /// subscribers want it: at most the room's other tracks, 800 in a
        /// default room (`participantsPerRoom` 100 at `tracksPerParticipant`
        /// 8), with room for a node configured higher.
        package static let maxWants = 2000
        /// Every id, name and text field of a record (room, node, ids,
        /// identity, MID, rid, cname, msid, URIs, restriction values).
        package static let maxStringBytes = 256
        /// `a=fmtp` text alone: H.264's `sprop-parameter-sets` carries
        /// base64 SPS and PPS, which can pass 256 bytes.
        package static let maxFormatParametersBytes = 1024
        package static let maxCodecsPerTrack = 32
        package static let maxFeedbackPerCodec = 16
        package static let maxSimulcastLayers = 16
        package static let maxPayloadTypesPerLayer = 32
        package static let maxRestrictionsPerLayer = 16
        package static let maxSourceStreams = 16
        package static let maxExtensionMaps = 64
        package static let maxExtensionAttributes = 8

        static func fits(_ s: String?) -> Bool { (s?.utf8.count ?? 0) <= maxStringBytes }
    }
}
