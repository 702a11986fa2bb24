import RoomProtocol
import Rooms
import Synchronization
import Testing
import Wire

/// Per-participant worker placement (docs/ARCHITECTURE.md, "Rooms over
/// every worker").
@Suite struct WorkerPlacementTests {
    static let idle = [WorkerLoad](repeating: WorkerLoad(transports: 0, forwardedPacketsPerSecond: 0), count: 4)

    @Test func aSmallRoomStaysOnItsFirstWorker() {
        let policy = WorkerPlacement(spreadAfter: 3)
        var scores = policy.scores(workers: 4, loads: Self.idle, placed: [:])
        scores[2] = 900  // a small room with media next to idle workers: not clearly
        for n in 0..<3 { #expect(policy.place(roomWorker: 2, roomParticipants: n, scores: scores) == 2) }
        // The fourth participant goes by load.
        #expect(policy.place(roomWorker: 2, roomParticipants: 3, scores: scores) == 0)
    }

    @Test func aClearlyBusierFirstWorkerSpreadsEvenASmallRoom() {
        let policy = WorkerPlacement(spreadAfter: 8)
        let loads = [
            WorkerLoad(transports: 40, forwardedPacketsPerSecond: 20_000),
            WorkerLoad(transports: 2, forwardedPacketsPerSecond: 300),
            WorkerLoad(transports: 1, forwardedPacketsPerSecond: 100),
        ]
        let scores = policy.scores(workers: 3, loads: loads, placed: [:])
        #expect(scores == [22_000, 400, 150])
        #expect(policy.place(roomWorker: 0, roomParticipants: 1, scores: scores) == 2)
        // 4,400 against an idle worker: busier, but not by the slack
        // (2 x 0 + 5,000), so the room keeps its worker.
        let close = policy.scores(
            workers: 3,
            loads: [
                WorkerLoad(transports: 8, forwardedPacketsPerSecond: 4_000), loads[1],
                .init(transports: 0, forwardedPacketsPerSecond: 0),
            ],
            placed: [:])
        #expect(policy.place(roomWorker: 0, roomParticipants: 1, scores: close) == 0)
    }

    @Test func spreadAfterZeroOrOnePlacesEveryParticipantByLoad() {
        for n in [0, 1] {
            let policy = WorkerPlacement(spreadAfter: n)
            let scores: [Double] = [100, 50, 0, 50]
            #expect(policy.place(roomWorker: 0, roomParticipants: 0, scores: scores) == 2)
            #expect(policy.place(roomWorker: 1, roomParticipants: 5, scores: scores) == 2)
        }
    }

    @Test func theDirectorysOwnCountsCoverALaggingSnapshot() {
        let policy = WorkerPlacement()
        // The snapshot says idle; the directory has just placed three
        // participants (six transports) on worker 0.
        #expect(policy.scores(workers: 2, loads: nil, placed: [0: 6]) == [300, 0])
        #expect(
            policy.scores(workers: 2, loads: [WorkerLoad(transports: 8, forwardedPacketsPerSecond: 10)], placed: [0: 6]) == [
                410, 0,
            ])
        #expect(policy.leastLoaded([1, 0, 0], startingAt: 2) == 2, "ties go in turn from the start")
        #expect(policy.leastLoaded([1, 0, 0], startingAt: 0) == 1)
        #expect(policy.place(roomWorker: 3, roomParticipants: 0, scores: [0]) == 0, "one worker")
    }

    static let joinGrants = Grants(publish: true, subscribe: true)

    /// Joins `count` participants to `room`, each publishing audio; returns
    /// the worker of each one's publisher transport.
    static func joinAndPublish(
        _ directory: inout RoomDirectory<SequentialIdentifiers>, room: String, count: Int, firstConnection: UInt64
    ) -> [Int] {
        let now = Instant(nanoseconds: 1_000_000_000)
        var workers: [Int] = []
        for i in 0..<count {
            let c = ConnectionID(firstConnection + UInt64(i))
            _ = directory.join(
                JoinRequest(identity: "\(room)-\(i)", room: room, grants: joinGrants, mode: nil), connection: c, now: now)
            for case .media(.openTransport(_, let w, _, .publisher, _, _)) in directory.handle(
                .publish(sdp: audioOffer), from: c, now: now)
            {
                workers.append(w)
            }
        }
        return workers
    }

    static func endpoint(workers: Int) -> MediaEndpoint {
        MediaEndpoint(
            fingerprint: .init(algorithm: .sha256, digest: Array(repeating: 0xAB, count: 32))!,
            workers: Array(repeating: [], count: workers))
    }

    @Test func aRoomSpreadsOverTheWorkersOnceItOutgrowsSpreadAfter() {
        var configuration = RoomDirectory<SequentialIdentifiers>.Configuration(media: Self.endpoint(workers: 4))
        configuration.placement = WorkerPlacement(spreadAfter: 3)
        var directory = RoomDirectory(configuration: configuration, ids: SequentialIdentifiers())
        let workers = Self.joinAndPublish(&directory, room: "big", count: 7, firstConnection: 1)
        // Three share the first worker; then each goes to the least loaded
        // by the directory's own counts (no snapshot here).
        #expect(workers == [0, 0, 0, 1, 2, 3, 1])
        // The subscriber transports follow their participant's worker.
    }

    @Test func loadsFromTheShellSteerPlacementAndEveryoneGoesByLoadWithSpreadAfterOne() {
        let loads = Mutex<[WorkerLoad]>([
            WorkerLoad(transports: 0, forwardedPacketsPerSecond: 0), WorkerLoad(transports: 50, forwardedPacketsPerSecond: 9_000),
            WorkerLoad(transports: 0, forwardedPacketsPerSecond: 0),
        ])
        let box = LoadBox(loads: loads)
        var configuration = RoomDirectory<SequentialIdentifiers>.Configuration(media: Self.endpoint(workers: 3))
        configuration.placement = WorkerPlacement(spreadAfter: 1)
        configuration.workerLoads = { box.read() }
        var directory = RoomDirectory(configuration: configuration, ids: SequentialIdentifiers())
        let workers = Self.joinAndPublish(&directory, room: "r", count: 4, firstConnection: 1)
        // Worker 1 is busy: never chosen; 0 and 2 alternate as the
        // directory's counts grow.
        #expect(workers == [0, 2, 0, 2])
    }

    @Test func aParticipantsSubscriberTransportGoesWhereItsPublisherIs() {
        var configuration = RoomDirectory<SequentialIdentifiers>.Configuration(media: Self.endpoint(workers: 2))
        configuration.placement = WorkerPlacement(spreadAfter: 0)
        var directory = RoomDirectory(configuration: configuration, ids: SequentialIdentifiers())
        let now = Instant(nanoseconds: 1_000_000_000)
        var opened: [(ParticipantID, TransportRole, Int)] = []
        for i in 0..<3 {
            let c = ConnectionID(UInt64(i + 1))
            _ = directory.join(
                JoinRequest(identity: "p\(i)", room: "r", grants: Self.joinGrants, mode: nil), connection: c, now: now)
            for case .media(.openTransport(_, let w, let who, let role, _, _)) in directory.handle(
                .publish(sdp: audioOffer), from: c, now: now)
            {
                opened.append((who, role, w))
            }
        }
        var byParticipant: [ParticipantID: Set<Int>] = [:]
        for (who, _, w) in opened { byParticipant[who, default: []].insert(w) }
        #expect(opened.contains { $0.1 == .subscriber }, "the later publishers' tracks open subscriber transports")
        #expect(byParticipant.values.allSatisfy { $0.count == 1 }, "\(opened)")
        #expect(Set(byParticipant.values.compactMap(\.first)) == [0, 1], "by load, over both workers")
    }
}

final class LoadBox: Sendable {
    let loads: Mutex<[WorkerLoad]>
    init(loads: consuming Mutex<[WorkerLoad]>) { self.loads = loads }
    func read() -> [WorkerLoad] { loads.withLock { $0 } }
}
