import Cluster
import ClusterService
import Foundation
import Negotiation
import RTP
import RedisTesting
import SDP
import Testing
import Wire

extension ClusterProcessSuite {
    /// A cascaded room's parts on a real redis-server (issue #15): what two
    /// nodes write a third reads back, an expired part leaves the read and
    /// the index, a damaged value costs only itself.
    @Suite(.serialized) struct RoomShardRegistryTests {
        /// Short times so expiry is seen within a test.
        static let timing = ClusterTiming(
            refreshInterval: .milliseconds(100), recordLifetime: .milliseconds(400), commandTimeout: .milliseconds(500))

        let a = NodeID(rawValue: "a~0000000000000001")
        let b = NodeID(rawValue: "b~0000000000000002")
        let c = NodeID(rawValue: "c~0000000000000003")

        /// One connection per node, as each node has its own.
        func registry(_ server: RedisServerProcess) throws -> ClusterRegistry {
            let connection = try RedisConnection(endpoint: .unix(path: server.socketPath), timeout: Self.timing.commandTimeout)
            return ClusterRegistry(
                connection: connection, keys: ClusterKeys(prefix: "t"), timing: Self.timing,
                wallClockMilliseconds: { Int64(Date().timeIntervalSince1970 * 1000) })
        }

        /// A publisher with Opus and three-layer VP8 simulcast with RTX.
        func record(_ node: NodeID, room: String = "demo", participant: String) -> RoomShardRecord {
            let audio = PublishedTrackDescription(
                mid: "0", kind: .audio, direction: .sendonly, msid: MediaStreamID(streamID: "s", trackID: "a"),
                codecs: [.opus(payloadType: PayloadType(rawValue: 111)!)], simulcast: [],
                sources: SignalledSources(cname: "c", streams: [.init(ssrc: SSRC(1))], isSimulcast: false),
                headerExtensions: HeaderExtensionIDs(mid: 4, audioLevel: 1),
                extensionMaps: [
                    ExtensionMap(id: 1, uri: ExtensionMap.audioLevel), ExtensionMap(id: 4, uri: ExtensionMap.sdesMID),
                ],
                reducedSizeRTCP: true)
            let video = PublishedTrackDescription(
                mid: "1", kind: .video, direction: .sendonly, msid: MediaStreamID(streamID: "s", trackID: "v"),
                codecs: [.vp8(payloadType: PayloadType(rawValue: 96)!, rtxPayloadType: PayloadType(rawValue: 97)!)],
                simulcast: [SimulcastLayer(rid: "q"), SimulcastLayer(rid: "h"), SimulcastLayer(rid: "f")], sources: nil,
                headerExtensions: HeaderExtensionIDs(mid: 4, rtpStreamID: 10, repairedRTPStreamID: 11),
                reducedSizeRTCP: true)
            return RoomShardRecord(
                room: room, node: node, epoch: 9,
                participants: [
                    ShardParticipant(
                        id: participant, identity: "\(participant)@example",
                        tracks: [
                            ShardTrack(id: "\(participant)-a", relay: 1, description: audio),
                            ShardTrack(id: "\(participant)-v", relay: 2, description: video),
                        ])
                ],
                wants: [WantedTrack(trackID: "far", node: c)])
        }

        func indexMembers(_ r: ClusterRegistry) throws -> [String] {
            (try r.connection.call(["SMEMBERS", "t:shards:demo"]).elements ?? []).compactMap(\.text).sorted()
        }

        @Test func twoNodesPartsAreReadBackByAThird() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let (writerA, writerB, reader) = (try registry(server), try registry(server), try registry(server))
            let (ra, rb) = (record(a, participant: "PA_1"), record(b, participant: "PA_2"))
            #expect(try writerB.writeShard(rb, wakeUp: true))
            #expect(try writerA.writeShard(ra, wakeUp: true))
            #expect(try reader.readShards(room: "demo") == RoomShards(records: [ra, rb]))
            #expect(try reader.readShards(room: "elsewhere") == RoomShards())
            // The record and the index both expire with the record lifetime.
            for key in ["t:shard:demo:\(a)", "t:shards:demo"] {
                let ttl = try #require(try reader.connection.call(["PTTL", key]).integerValue)
                #expect(ttl > 0 && ttl <= 400)
            }
            // A record past its bounds is not written; the previous one stands.
            var tooLarge = ra
            tooLarge.wants = Array(repeating: WantedTrack(trackID: "x", node: b), count: RoomShardRecord.Bounds.maxWants + 1)
            #expect(try writerA.writeShard(tooLarge, wakeUp: false) == false)
            #expect(try reader.readShards(room: "demo").records == [ra, rb])
            // Leaving: the part and its entry go at once.
            try writerA.deleteShard(room: "demo", node: a)
            #expect(try reader.readShards(room: "demo") == RoomShards(records: [rb]))
            #expect(try indexMembers(reader) == [b.rawValue])
        }

        @Test func anExpiredPartLeavesTheReadAndItsIndexEntryIsPruned() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let (writerA, writerB, reader) = (try registry(server), try registry(server), try registry(server))
            let (ra, rb) = (record(a, participant: "PA_1"), record(b, participant: "PA_2"))
            #expect(try writerA.writeShard(ra, wakeUp: true) && writerB.writeShard(rb, wakeUp: true))
            // a keeps refreshing; b stops (it died): its part goes once its
            // record expires, and that read prunes its entry.
            var shards = try reader.readShards(room: "demo")
            let deadline = Date().addingTimeInterval(3)
            while shards.records.count == 2, Date() < deadline {
                usleep(50_000)
                _ = try writerA.writeShard(ra, wakeUp: false)
                shards = try reader.readShards(room: "demo")
            }
            #expect(shards == RoomShards(records: [ra], expired: [b]))
            #expect(try indexMembers(reader) == [a.rawValue])

            // The prune removes an entry only while its record is missing:
            // a part written again since the read keeps its entry.
            let keys = ClusterKeys(prefix: "t")
            let prune = try #require(RoomShardPrune.command(room: "demo", nodes: [a], keys: keys))
            #expect(try RoomShardPrune.removed(from: reader.connection.call(prune)) == 0)
            #expect(try indexMembers(reader) == [a.rawValue])

            // Once no node writes, the index itself expires.
            let gone = Date().addingTimeInterval(3)
            while try reader.connection.call(["EXISTS", "t:shards:demo"]) == .integer(1), Date() < gone { usleep(50_000) }
            #expect(try reader.connection.call(["EXISTS", "t:shards:demo"]) == .integer(0))
            #expect(try reader.readShards(room: "demo") == RoomShards())
        }

        @Test func aDamagedValueIsSkippedAndKeepsItsEntry() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let (writer, reader) = (try registry(server), try registry(server))
            let ra = record(a, participant: "PA_1")
            #expect(try writer.writeShard(ra, wakeUp: false))
            // b's key holds something that is not a record; c's key holds
            // a record of another room.
            let misfiled = String(decoding: record(c, room: "other", participant: "PA_3").encoded()!, as: UTF8.self)
            for (node, value) in [(b, "{\"room\":\"demo\",\"epoch\":"), (c, misfiled)] {
                _ = try reader.connection.pipeline([
                    ["SET", "t:shard:demo:\(node)", value, "PX", "400"], ["SADD", "t:shards:demo", node.rawValue],
                ])
            }
            #expect(try reader.readShards(room: "demo") == RoomShards(records: [ra], unreadable: 1, misfiled: 1))
            // Their keys exist: nothing to prune (they expire on their own).
            #expect(try indexMembers(reader) == [a, b, c].map(\.rawValue))
            // A key of another type is Redis's refusal, not a damaged record.
            _ = try reader.connection.call(["DEL", "t:shards:demo"])
            _ = try reader.connection.call(["SET", "t:shards:demo", "x"])
            #expect(throws: ClusterError.self) { try reader.readShards(room: "demo") }
        }
    }
}
