import Foundation
import ICE
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
}
