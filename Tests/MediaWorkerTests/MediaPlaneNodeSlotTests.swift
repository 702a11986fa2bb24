import DTLS
import ICE
import MediaRouter
import Negotiation
import RTP
import RoomProtocol
import Rooms
import Testing
import Wire
import WorkerRelay

@testable import MediaWorker

/// The media plane's half of the cascade's commands: each names another
/// node, which the plane resolves to that node's relay slot (past its
/// workers) before the planner sees it; a node without a slot costs the
/// command, counted; a node dropped from the relay list leaves nothing in
/// the planner.
@Suite(.serialized) struct MediaPlaneNodeSlotTests {
    static let room = "r"
    static let description = PublishedTrackDescription(
        mid: "0", kind: .audio, direction: .sendonly, msid: nil, codecs: [.opus(payloadType: PayloadType(rawValue: 111)!)],
        simulcast: [], sources: nil, headerExtensions: HeaderExtensionIDs(), reducedSizeRTCP: true)

    static func link(to node: String, port: UInt16) -> NodeRelayLink {
        NodeRelayLink(
            node: node, isClient: true,
            localCredentials: ICECredentials(ufrag: "localufrag", password: "local-password-0123456789"),
            remoteCredentials: ICECredentials(ufrag: "remoteufrag", password: "remote-password-0123456789"),
            remoteFingerprint: CertificateFingerprint(algorithm: .sha256, digest: Array(repeating: 0, count: 32))!,
            remote: TransportAddress(ipv4: 127, 0, 0, 1, port: port), local: TransportAddress(ipv4: 127, 0, 0, 1, port: 9))
    }

    static func remoteTrack(node: String) -> MediaCommand {
        .addRemoteTrack(
            room: room, participant: ParticipantID("PA_far"), trackID: "TR_r", description: description, node: node,
            relay: RelayTrackID(5))
    }

    @Test(.timeLimit(.minutes(1)))
    func cascadeCommandsReachThePlannerWithTheirNodesSlot() throws {
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let plane = try MediaPlane(count: 2, bindIP: "127.0.0.1", firstPort: 0, certificate: certificate)
        defer { plane.stop() }
        plane.setNodeRelays([Self.link(to: "node-b", port: 40001)])
        // Past the plane's two workers.
        #expect(plane.nodeRelaySlotTable == ["node-b": 2])

        var planner = RoomSpanPlanner(workers: 2)
        _ = plane.plan(
            .openTransport(
                room: Self.room, worker: 1, participant: ParticipantID("PA_b"), role: .subscriber,
                local: ICECredentials.random(), remote: nil), with: &planner)
        #expect(plane.plan(Self.remoteTrack(node: "node-b"), with: &planner).isEmpty)
        let forward = MediaCommand.forward(
            room: Self.room, trackID: "TR_r", subscriber: ParticipantID("PA_b"),
            outgoing: OutgoingTrack(
                kind: .audio, codec: .opus(payloadType: PayloadType(rawValue: 111)!), ssrc: SSRC(1), streamID: "PA_far",
                trackID: "TR_r", cname: "sfu"))
        let out = plane.plan(forward, with: &planner)
        #expect(
            out.first
                == PlannedCommand(
                    worker: RoomSpanPlanner.nodeRelayWorker,
                    .addRelayedTrack(
                        room: Self.room, publisher: ParticipantID("PA_far"), trackID: "TR_r", description: Self.description,
                        relay: RelayTrackID(5), from: 2)))

        // A node the plane relays to not (any more, or yet): ignored, counted.
        let ghost = MediaCommand.addRemoteSink(room: Self.room, trackID: "TR_r", node: "node-ghost", relay: RelayTrackID(6))
        #expect(plane.plan(ghost, with: &planner).isEmpty)
        #expect(plane.nodeCommandsIgnored == 1)
        #expect(planner.ignoredCommands == 0, "the planner never saw it")
    }

    @Test(.timeLimit(.minutes(1)))
    func aDroppedNodesTracksLeaveThePlanner() throws {
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let plane = try MediaPlane(count: 2, bindIP: "127.0.0.1", firstPort: 0, certificate: certificate)
        defer { plane.stop() }
        plane.setNodeRelays([Self.link(to: "node-b", port: 40001), Self.link(to: "node-c", port: 40002)])
        #expect(plane.nodeRelaySlotTable == ["node-b": 2, "node-c": 3])
        plane.post(Self.remoteTrack(node: "node-b"))
        #expect(plane.planner.withLock { $0.sourceWorker(of: "TR_r", in: Self.room) } == 0)
        // node-b's record expired: its tracks go; node-c keeps its slot.
        plane.setNodeRelays([Self.link(to: "node-c", port: 40002)])
        #expect(plane.planner.withLock { $0.sourceWorker(of: "TR_r", in: Self.room) } == nil)
        #expect(plane.nodeRelaySlotTable == ["node-c": 3])
        plane.post(Self.remoteTrack(node: "node-b"))
        #expect(plane.nodeCommandsIgnored == 1)
        #expect(plane.planner.withLock { $0.roomCount } == 0)
    }
}
