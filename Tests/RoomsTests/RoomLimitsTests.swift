import RoomProtocol
import SFUTesting
import Testing
import Wire

@testable import Rooms

/// One sendonly Opus m-section (aiortc's, trimmed): copies of it make
/// offers of any size.
private let oneAudioSection = [
    "v=0", "o=- 4004986353 4004986353 IN IP4 0.0.0.0", "s=-", "t=0 0", "a=group:BUNDLE 0",
    "m=audio 36289 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 127.0.0.1", "a=sendonly", "a=mid:0", "a=rtcp-mux",
    "a=ssrc:193762160 cname:63b8698c", "a=rtpmap:96 opus/48000/2",
    "a=candidate:1 1 udp 2130706431 127.0.0.1 36289 typ host", "a=ice-ufrag:MAol", "a=ice-pwd:sVRCnUWrfYIlAoQQWEy9KI",
    "a=fingerprint:sha-256 A7:8D:CF:46:02:5E:0D:26:6F:72:2F:DC:31:15:72:68:C0:CD:82:F7:60:ED:B5:E6:F2:B5:C2:D6:5A:8D:EC:4F",
    "a=setup:actpass", "",
].joined(separator: "\r\n")

private func offer(sections: Int) -> String { OfferBuilders.repeatingFirstSection(of: oneAudioSection, count: sections) }

private let oneWorker = MediaEndpoint(
    fingerprint: .init(algorithm: .sha256, digest: Array(repeating: 0xAB, count: 32))!, workers: [[]])
private let now = Instant(nanoseconds: 1_000_000_000)
private let all = Grants(publish: true, subscribe: true)

private func directory(_ change: (inout RoomLimits) -> Void = { _ in }) -> RoomDirectory<SequentialIdentifiers> {
    var limits = RoomLimits()
    change(&limits)
    return RoomDirectory(configuration: .init(media: oneWorker, limits: limits), ids: SequentialIdentifiers())
}

private func errors(_ effects: [RoomEffect], to c: ConnectionID) -> [ErrorCode] {
    effects.compactMap { if case .send(c, .error(let code, _)) = $0 { code } else { nil } }
}

private func mediaCommands(_ effects: [RoomEffect]) -> [MediaCommand] {
    effects.compactMap { if case .media(let m) = $0 { m } else { nil } }
}

/// Limits refuse before any state changes (docs/SECURITY.md): no
/// participant, track, subscription or media command is left behind.
@Suite struct RoomLimitsTests {
    @Test func anOfferWithTooManySectionsIsRefusedOverWHIPAndWebSocketWithNothingKept() {
        var d = directory()
        #expect(offer(sections: 17).components(separatedBy: "m=audio").count == 18)
        let whip = d.whipPublish(JoinRequest(identity: "w", room: "r", grants: all), sdp: offer(sections: 17), now: now)
        #expect(whip.failure?.code == .tooManyTracks)
        #expect(d.participantCount == 0 && d.roomCount == 0)

        let c = ConnectionID(1)
        _ = d.join(JoinRequest(identity: "a", room: "r", grants: all), connection: c, now: now)
        let effects = d.handle(.publish(sdp: offer(sections: 17)), from: c, now: now)
        #expect(errors(effects, to: c) == [.tooManyTracks])
        #expect(mediaCommands(effects).isEmpty)
        #expect(d.members(of: "r").count == 1)
        // Eight sections are within both limits: published.
        let sixteen = d.handle(.publish(sdp: offer(sections: 8)), from: c, now: now)
        #expect(errors(sixteen, to: c).isEmpty)
    }

    @Test func theSectionLimitStopsTheParserAtTheFirstSectionOver() {
        var limits = RoomLimits()
        limits.sectionsPerOffer = 2
        // The third section is garbage: the parser never reaches it.
        let text = offer(sections: 2) + "m=audio x\r\n"
        #expect(limits.parse(text, offer: true).failure?.code == .tooManyTracks)
        #expect(limits.parse(offer(sections: 2), offer: true).failure == nil)
    }

    @Test func moreSendingTracksThanAllowedAreRefused() {
        var d = directory()
        let c = ConnectionID(1)
        _ = d.join(JoinRequest(identity: "a", room: "r", grants: all), connection: c, now: now)
        let effects = d.handle(.publish(sdp: offer(sections: 9)), from: c, now: now)
        #expect(errors(effects, to: c) == [.tooManyTracks])
        #expect(mediaCommands(effects).isEmpty)
        let whip = d.whipPublish(JoinRequest(identity: "w", room: "r", grants: all), sdp: offer(sections: 9), now: now)
        #expect(whip.failure?.code == .tooManyTracks)
        #expect(d.participantCount == 1)
    }

    @Test func anOversizeSDPIsRefusedBeforeParsing() {
        var d = directory { $0.sdpBytes = 2048 }
        // Not SDP at all: size is checked first.
        let big = String(repeating: "x", count: 2049)
        let whip = d.whipPublish(JoinRequest(identity: "w", room: "r", grants: all), sdp: big, now: now)
        #expect(whip.failure?.code == .tooLarge)
        #expect(d.participantCount == 0)
        let c = ConnectionID(1)
        _ = d.join(JoinRequest(identity: "a", room: "r", grants: all), connection: c, now: now)
        #expect(errors(d.handle(.publish(sdp: big), from: c, now: now), to: c) == [.tooLarge])
        #expect(errors(d.handle(.subscriberAnswer(sdp: big, version: 1), from: c, now: now), to: c).count == 1)
        // Over the parser's own ceiling, with the limit set above it: the
        // same code, not "malformed".
        var generous = RoomLimits()
        generous.sdpBytes = 1 << 20
        #expect(generous.parse(offer(sections: 2000), offer: true).failure?.code == .tooLarge)
    }

    @Test func aFullRoomRefusesJoinsAndWHIPButNotResumes() {
        var d = directory { $0.participantsPerRoom = 2 }
        _ = d.join(JoinRequest(identity: "a", room: "r", grants: all), connection: ConnectionID(1), now: now)
        _ = d.join(JoinRequest(identity: "b", room: "r", grants: all), connection: ConnectionID(2), now: now)
        let third = d.join(JoinRequest(identity: "c", room: "r", grants: all), connection: ConnectionID(3), now: now)
        #expect(errors(third, to: ConnectionID(3)) == [.roomFull])
        let whip = d.whipPublish(JoinRequest(identity: "w", room: "r", grants: all), sdp: offer(sections: 1), now: now)
        #expect(whip.failure?.code == .roomFull)
        #expect(d.members(of: "r").count == 2 && d.participantCount == 2)
        // b reconnects: a resume is no new member.
        _ = d.disconnected(ConnectionID(2), now: now)
        let resumed = d.join(JoinRequest(identity: "b", room: "r", grants: all), connection: ConnectionID(4), now: now)
        #expect(errors(resumed, to: ConnectionID(4)).isEmpty)
        // Another room still takes joins.
        let other = d.join(JoinRequest(identity: "c", room: "s", grants: all), connection: ConnectionID(5), now: now)
        #expect(errors(other, to: ConnectionID(5)).isEmpty)
    }

    @Test func aFullServerRefusesNewRoomsOnly() {
        var d = directory { $0.rooms = 1 }
        _ = d.join(JoinRequest(identity: "a", room: "r", grants: all), connection: ConnectionID(1), now: now)
        let second = d.join(JoinRequest(identity: "b", room: "s", grants: all), connection: ConnectionID(2), now: now)
        #expect(errors(second, to: ConnectionID(2)) == [.serverFull])
        let whip = d.whipPublish(JoinRequest(identity: "w", room: "s", grants: all), sdp: offer(sections: 1), now: now)
        #expect(whip.failure?.code == .serverFull)
        #expect(d.roomCount == 1 && d.participantCount == 1)
        let same = d.join(JoinRequest(identity: "b", room: "r", grants: all), connection: ConnectionID(2), now: now)
        #expect(errors(same, to: ConnectionID(2)).isEmpty)
    }

    @Test func subscriptionsStopAtTheLimitWithAnErrorAndNoForward() throws {
        var d = directory { $0.subscriptionsPerParticipant = 1 }
        let (a, b, viewer) = (ConnectionID(1), ConnectionID(2), ConnectionID(3))
        _ = d.join(JoinRequest(identity: "viewer", room: "r", grants: all), connection: viewer, now: now)
        _ = d.join(JoinRequest(identity: "a", room: "r", grants: all), connection: a, now: now)
        _ = d.join(JoinRequest(identity: "b", room: "r", grants: all), connection: b, now: now)
        let viewerID = try #require(d.participant(on: viewer))
        let first = d.handle(.publish(sdp: offer(sections: 1)), from: a, now: now)
        let forwardsToViewer = { (effects: [RoomEffect]) in
            mediaCommands(effects).filter { if case .forward(_, _, viewerID, _) = $0 { true } else { false } }.count
        }
        #expect(forwardsToViewer(first) == 1)
        let second = d.handle(.publish(sdp: offer(sections: 1)), from: b, now: now)
        #expect(forwardsToViewer(second) == 0)
        #expect(errors(second, to: viewer) == [.tooManySubscriptions])
        // b still receives a's track: the limit is per participant.
        let bID = try #require(d.participant(on: b))
        #expect(mediaCommands(first).contains { if case .forward(_, _, bID, _) = $0 { true } else { false } })
        // An explicit subscribe over the limit is refused the same way.
        guard
            case .trackPublished(_, let track)? = second.compactMap({ e -> ServerMessage? in
                if case .send(viewer, let m) = e, case .trackPublished = m { m } else { nil }
            }).first
        else {
            Issue.record("no track-published")
            return
        }
        let explicit = d.handle(.subscribe(trackID: track.id), from: viewer, now: now)
        #expect(errors(explicit, to: viewer) == [.tooManySubscriptions])
        #expect(mediaCommands(explicit).isEmpty)
    }
}

extension Result {
    fileprivate var failure: Failure? { if case .failure(let e) = self { e } else { nil } }
}
