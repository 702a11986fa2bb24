import Foundation
import ICE
import RoomProtocol
import Testing
import Wire

@testable import Rooms

/// Every answer that carries candidates carries the worker's passive
/// ICE-TCP candidate too (RFC 6544), after the UDP one: WHIP, WHEP and the
/// room protocol all take the worker's list from `MediaEndpoint`.
@Suite struct TCPCandidateAnswerTests {
    static let udp = ICECandidate.host(TransportAddress(ipv4: 192, 0, 2, 10, port: 10000))
    static let tcp = ICECandidate.hostTCPPassive(TransportAddress(ipv4: 192, 0, 2, 10, port: 10000))

    static func fixture(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../SDPTests/Fixtures/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    static func candidateLines(_ sdp: String) -> [String] {
        sdp.split(separator: "\r\n").filter { $0.hasPrefix("a=candidate:") }.map(String.init)
    }

    @Test func whipAndWHEPAnswersCarryTheTCPCandidate() throws {
        var directory = RoomDirectory(
            configuration: .init(
                media: MediaEndpoint(
                    fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, workers: [[Self.udp, Self.tcp]])),
            ids: SequentialIdentifiers())
        let now = Instant(nanoseconds: 1_000_000_000)
        let grants = Grants(publish: true, subscribe: true)
        let whip = try directory.whipPublish(
            JoinRequest(identity: "alice", room: "r", grants: grants), sdp: Self.fixture("aiortc-offer.sdp"), now: now
        ).get()
        let whep = try directory.whepPlay(
            JoinRequest(identity: "viewer", room: "r", grants: grants), target: nil,
            sdp: Self.fixture("chromium-recvonly.sdp"), now: now
        ).get()
        for answer in [whip.answer, whep.answer] {
            let lines = Self.candidateLines(answer)
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.first?.contains(" udp ") == true)
            #expect(lines.last?.hasSuffix(" 192.0.2.10 10000 typ host tcptype passive") == true, "\(lines)")
        }
    }

    /// Placed by load, a WHEP viewer lands on another worker than the
    /// WHIP publisher: its answer carries that worker's candidate, and its
    /// transport opens there.
    @Test func eachParticipantsAnswerCarriesItsOwnWorkersCandidates() throws {
        let second = ICECandidate.host(TransportAddress(ipv4: 192, 0, 2, 10, port: 10001))
        var configuration = RoomDirectory<SequentialIdentifiers>.Configuration(
            media: MediaEndpoint(fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, workers: [[Self.udp], [second]]))
        configuration.placement = WorkerPlacement(spreadAfter: 0)
        var directory = RoomDirectory(configuration: configuration, ids: SequentialIdentifiers())
        let now = Instant(nanoseconds: 1_000_000_000)
        let grants = Grants(publish: true, subscribe: true)
        let whip = try directory.whipPublish(
            JoinRequest(identity: "alice", room: "r", grants: grants), sdp: Self.fixture("aiortc-offer.sdp"), now: now
        ).get()
        let whep = try directory.whepPlay(
            JoinRequest(identity: "viewer", room: "r", grants: grants), target: nil,
            sdp: Self.fixture("chromium-recvonly.sdp"), now: now
        ).get()
        #expect(Self.candidateLines(whip.answer).first?.contains(" 10000 typ host") == true)
        #expect(
            Self.candidateLines(whep.answer).first?.contains(" 10001 typ host") == true, "\(Self.candidateLines(whep.answer))")
        let opened = whep.effects.compactMap { effect -> Int? in
            if case .media(.openTransport(_, let worker, _, _, _, _)) = effect { worker } else { nil }
        }
        #expect(opened == [1])
    }
}
