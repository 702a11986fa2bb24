import Foundation
import RoomProtocol
import Testing
import Wire

@testable import Rooms

/// A directory with media workers, and the committed real offers.
struct MediaHarness {
    var directory = RoomDirectory(
        configuration: .init(media: MediaEndpoint(fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, workers: [[]])),
        ids: SequentialIdentifiers())
    let now = Instant(nanoseconds: 1_000_000_000)
    static let all = Grants(publish: true, subscribe: true)

    static func fixture(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../SDPTests/Fixtures/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    mutating func join(_ identity: String, on c: UInt64, grants: Grants = all) -> [RoomEffect] {
        directory.join(JoinRequest(identity: identity, room: "r", grants: grants), connection: ConnectionID(c), now: now)
    }

    mutating func whip(_ identity: String, sdp: String? = nil, room: String = "r") throws -> Result<HTTPSessionAnswer, RoomError>
    {
        directory.whipPublish(
            JoinRequest(identity: identity, room: room, grants: Self.all), sdp: try sdp ?? Self.fixture("aiortc-offer.sdp"),
            now: now)
    }

    mutating func whep(_ identity: String, target: String? = nil) throws -> Result<HTTPSessionAnswer, RoomError> {
        directory.whepPlay(
            JoinRequest(identity: identity, room: "r", grants: Self.all), target: target,
            sdp: try Self.fixture("chromium-recvonly.sdp"), now: now)
    }
}

private func messages(_ effects: [RoomEffect], to c: UInt64) -> [ServerMessage] {
    effects.compactMap { if case .send(let to, let m) = $0, to == ConnectionID(c) { m } else { nil } }
}

func forwards(_ effects: [RoomEffect]) -> [(String, ParticipantID, UInt8)] {
    effects.compactMap {
        if case .media(.forward(_, let track, let to, let outgoing)) = $0 {
            (track, to, outgoing.codec.payloadType.rawValue)
        } else {
            nil
        }
    }
}

@Suite struct HTTPSessionTests {
    @Test func whipPublisherIsAnOrdinaryParticipantForWebSocketMembers() throws {
        var h = MediaHarness()
        _ = h.join("bob", on: 1)
        let bob = try #require(h.directory.participant(on: ConnectionID(1)))
        let result = try h.whip("alice").get()
        #expect(result.participant == ParticipantID("PA_2"))
        #expect(result.session == "SE_3")
        #expect(result.answer.hasPrefix("v=0\r\n"))
        #expect(result.answer.contains("a=ice-lite\r\n"))
        #expect(result.answer.contains("a=setup:passive\r\n"))
        #expect(result.etag.hasPrefix("\"") && result.etag.hasSuffix("\"") && result.etag.count >= 6)
        // Bob hears of alice and of her two tracks (aiortc offers audio and video).
        let toBob = messages(result.effects, to: 1)
        #expect(toBob.first == .participantJoined(ParticipantInfo(id: result.participant, identity: "alice")))
        #expect(toBob.filter { if case .trackPublished(result.participant, _) = $0 { true } else { false } }.count == 2)
        #expect(toBob.contains { if case .subscriberOffer = $0 { true } else { false } })
        // Nothing is sent to the WHIP participant itself.
        #expect(result.effects.allSatisfy { if case .send(let c, _) = $0 { c == ConnectionID(1) } else { true } })
        #expect(
            result.effects.contains {
                if case .media(.openTransport(_, _, result.participant, .publisher, _, let remote)) = $0 {
                    remote != nil
                } else {
                    false
                }
            })
        #expect(forwards(result.effects).map(\.1) == [bob, bob])
        #expect(h.directory.members(of: "r") == [bob, result.participant])
    }

    @Test func whepPlaysThePublisherWithTheClientsPayloadTypes() throws {
        var h = MediaHarness()
        let alice = try h.whip("alice").get()
        _ = h.join("bob", on: 1)
        let result = try h.whep("carol").get()
        // Chromium's recvonly offer: Opus is 111 there (aiortc sent 96), VP8 is 96 (aiortc: 97).
        #expect(forwards(result.effects).map(\.2) == [111, 96])
        #expect(forwards(result.effects).allSatisfy { $0.1 == result.participant })
        #expect(
            result.effects.contains {
                if case .media(.openTransport(_, _, result.participant, .subscriber, _, let remote)) = $0 {
                    remote != nil
                } else {
                    false
                }
            })
        #expect(
            messages(result.effects, to: 1) == [.participantJoined(ParticipantInfo(id: result.participant, identity: "carol"))])
        #expect(result.answer.contains("a=sendonly\r\n"))
        #expect(result.answer.contains("a=msid:\(alice.participant) "))
        // Alice leaves: carol's forwarding stops; carol stays listed.
        let ended = h.directory.endSession(.whip, room: "r", session: alice.session)
        let gone = try #require(ended)
        #expect(gone.contains { if case .media(.stopForward(_, _, result.participant)) = $0 { true } else { false } })
        #expect(messages(gone, to: 1).contains(.participantLeft(alice.participant)))
        #expect(h.directory.members(of: "r").contains(result.participant))
    }

    /// Chromium publishing with H.264 first (the room page's `?codec=h264`):
    /// the WHIP answer takes H.264 alone; a room member is offered it with
    /// the publisher's payload type and fmtp; a WHEP player (Chromium's
    /// recvonly offer) gets it on its own 42e01f entry.
    @Test func anH264PublisherReachesRoomMembersAndPlayersInH264() throws {
        var h = MediaHarness()
        _ = h.join("bob", on: 1)
        let alice = try h.whip("alice", sdp: MediaHarness.fixture("chromium-publish-h264-simulcast.sdp")).get()
        let video = alice.answer.split(separator: "\r\n").first { $0.hasPrefix("m=video ") }
        #expect(video?.hasSuffix(" UDP/TLS/RTP/SAVPF 108 109") == true, "\(alice.answer)")
        #expect(!alice.answer.contains("VP8"))
        #expect(forwards(alice.effects).map(\.2) == [111, 108])
        let offer = try #require(
            messages(alice.effects, to: 1).lazy.compactMap { if case .subscriberOffer(let sdp, _) = $0 { sdp } else { nil } }
                .first)
        #expect(offer.contains("a=rtpmap:108 H264/90000\r\n"))
        #expect(offer.contains("a=fmtp:108 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f\r\n"))
        let carol = try h.whep("carol").get()
        // Chromium's recvonly offer lists 42001f (102) before 42e01f (108).
        #expect(forwards(carol.effects).map(\.2) == [111, 108])
    }

    /// A room member whose browser cannot decode the publisher's H.264
    /// profile (Chromium has no Constrained High decoder) rejects that
    /// section; it gets the other tracks, and an error naming the one it
    /// does not get, instead of a refused answer and no media at all.
    @Test func aMemberThatCannotDecodeThePublishersProfileGetsTheOtherTracks() throws {
        var h = MediaHarness()
        _ = h.join("bob", on: 1)
        let bob = try #require(h.directory.participant(on: ConnectionID(1)))
        // Chromium's H.264-first offer with its 42e01f entries made 640c1f:
        // no Constrained Baseline is left, so 108 (640c1f) is chosen.
        let offer = try MediaHarness.fixture("chromium-publish-h264-simulcast.sdp")
            .replacingOccurrences(of: "profile-level-id=42e01f", with: "profile-level-id=640c1f")
        let alice = try h.whip("alice", sdp: offer).get()
        let video = try #require(forwards(alice.effects).first { $0.2 == 108 }?.0)
        let audio = try #require(forwards(alice.effects).first { $0.2 == 111 }?.0)
        let (sdp, version) = try #require(
            messages(alice.effects, to: 1).lazy.compactMap { if case .subscriberOffer(let s, let v) = $0 { (s, v) } else { nil } }
                .first)
        #expect(sdp.contains("a=fmtp:108 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=640c1f\r\n"))
        let effects = h.directory.handle(
            .subscriberAnswer(sdp: answerRejectingVideo(sdp), version: version), from: ConnectionID(1), now: h.now)
        #expect(effects.contains { if case .media(.stopForward(_, video, bob)) = $0 { true } else { false } }, "\(effects)")
        #expect(!effects.contains { if case .media(.stopForward(_, audio, _)) = $0 { true } else { false } })
        #expect(effects.contains { if case .media(.setRemote(_, bob, .subscriber, _)) = $0 { true } else { false } })
        let errors = messages(effects, to: 1).filter { $0.isError(.negotiationFailed) }
        #expect(errors.count == 1, "\(effects)")
        guard case .error(_, let message)? = errors.first else { return }
        #expect(message.contains(video) && message.contains("640c1f"), "\(message)")
    }

    @Test func whepBeforeAnythingIsPublishedIsRefused() throws {
        var h = MediaHarness()
        _ = h.join("bob", on: 1)
        #expect(throws: RoomError.self) { try h.whep("carol").get() }
        guard case .failure(let e) = try h.whep("carol") else { Issue.record("accepted"); return }
        #expect(e.code == .nothingPublished)
        _ = try h.whip("alice").get()
        guard case .failure(let other) = try h.whep("carol", target: "zed") else { Issue.record("accepted"); return }
        #expect(other.code == .nothingPublished)
        #expect(try h.whep("carol", target: "alice").get().participant.rawValue.hasPrefix("PA_"))
        // Refusals added nobody.
        #expect(h.directory.participantCount == 3)
    }

    @Test func oneIdentityPerRoomAcrossWebSocketAndHTTPSessions() throws {
        var h = MediaHarness()
        _ = h.join("bob", on: 1)
        guard case .failure(let e) = try h.whip("bob") else { Issue.record("accepted"); return }
        #expect(e.code == .identityInUse)
        _ = try h.whip("alice").get()
        let effects = h.join("alice", on: 2)
        #expect(messages(effects, to: 2).first?.isError(.identityInUse) == true)
        #expect(h.directory.participant(on: ConnectionID(2)) == nil)
        guard case .failure(let again) = try h.whip("alice") else { Issue.record("accepted"); return }
        #expect(again.code == .identityInUse)
    }

    @Test func malformedOrUnusableOffersAreRefusedWithoutAParticipant() throws {
        var h = MediaHarness()
        guard case .failure(let e) = try h.whip("alice", sdp: "this is not SDP") else { Issue.record("accepted"); return }
        #expect(e.code == .negotiationFailed)
        #expect(e.message.hasPrefix("malformed SDP"))
        guard case .failure(let recv) = try h.whip("alice", sdp: MediaHarness.fixture("chromium-recvonly.sdp")) else {
            Issue.record("accepted")
            return
        }
        #expect(recv.message == "the offer sends no audio or video we accept")
        #expect(h.directory.participantCount == 0)
        #expect(h.directory.roomCount == 0)
    }

    @Test func endingASessionNeedsItsKindRoomAndId() throws {
        var h = MediaHarness()
        _ = h.join("bob", on: 1)
        let alice = try h.whip("alice").get()
        #expect(h.directory.hasSession(.whip, room: "r", session: alice.session))
        #expect(!h.directory.hasSession(.whep, room: "r", session: alice.session))
        #expect(h.directory.endSession(.whep, room: "r", session: alice.session) == nil)
        #expect(h.directory.endSession(.whip, room: "other", session: alice.session) == nil)
        #expect(h.directory.endSession(.whip, room: "r", session: "SE_nope") == nil)
        let ended = h.directory.endSession(.whip, room: "r", session: alice.session)
        let effects = try #require(ended)
        #expect(messages(effects, to: 1).contains(.participantLeft(alice.participant)))
        #expect(effects.contains(.media(.releaseParticipant(room: "r", participant: alice.participant))))
        #expect(h.directory.endSession(.whip, room: "r", session: alice.session) == nil)
    }

    @Test func aFailedTransportRemovesHTTPParticipantsOnly() throws {
        var h = MediaHarness()
        _ = h.join("bob", on: 1)
        let bob = try #require(h.directory.participant(on: ConnectionID(1)))
        let alice = try h.whip("alice").get()
        #expect(h.directory.transportFailed(bob, now: h.now).isEmpty)
        let effects = h.directory.transportFailed(alice.participant, now: h.now)
        #expect(messages(effects, to: 1).contains(.participantLeft(alice.participant)))
        #expect(!h.directory.hasSession(.whip, room: "r", session: alice.session))
        #expect(h.directory.members(of: "r") == [bob])
    }

    @Test func aWebSocketJoinerReceivesAnExistingWHIPPublisher() throws {
        var h = MediaHarness()
        let alice = try h.whip("alice").get()
        let effects = h.join("bob", on: 1)
        guard case .joined(_, _, _, let others, _) = messages(effects, to: 1).first else {
            Issue.record("no joined")
            return
        }
        #expect(others.map(\.id) == [alice.participant])
        #expect(others.first?.tracks.count == 2)
        #expect(forwards(effects).count == 2)
    }
}

/// A browser's answer to a subscriber offer `sdp` that receives audio and
/// rejects the video section as Chromium does when it decodes none of its
/// codecs: port 0, format 0, no rtpmap, mid kept, out of BUNDLE.
private func answerRejectingVideo(_ sdp: String) -> String {
    let parts = sdp.components(separatedBy: "\r\nm=")
    var sections: [[String]] = []
    var rejectedMID = ""
    for (i, part) in parts.enumerated() {
        var lines = part.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        if i > 0 { lines[0] = "m=" + lines[0] }
        lines = lines.filter {
            !$0.hasPrefix("a=candidate") && !$0.hasPrefix("a=end-of-candidates") && !$0.hasPrefix("a=ssrc")
                && !$0.hasPrefix("a=msid") && $0 != "a=ice-lite"
        }
        lines = lines.map { $0 == "a=setup:actpass" ? "a=setup:active" : ($0 == "a=sendonly" ? "a=recvonly" : $0) }
        if lines[0].hasPrefix("m=video ") {
            rejectedMID = lines.first { $0.hasPrefix("a=mid:") }.map { String($0.dropFirst(6)) } ?? ""
            lines[0] = "m=video 0 UDP/TLS/RTP/SAVPF 0"
            lines.removeAll { $0.hasPrefix("a=rtpmap") || $0.hasPrefix("a=fmtp") || $0.hasPrefix("a=rtcp-fb") }
        }
        sections.append(lines)
    }
    sections[0] = sections[0].map { line in
        guard line.hasPrefix("a=group:BUNDLE ") else { return line }
        return line.split(separator: " ").filter { $0 != Substring(rejectedMID) }.joined(separator: " ")
    }
    return sections.map { $0.joined(separator: "\r\n") }.joined(separator: "\r\n") + "\r\n"
}
