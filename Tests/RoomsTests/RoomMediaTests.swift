import RoomProtocol
import Testing
import Wire

@testable import Rooms

/// An aiortc audio offer, trimmed to one sendonly Opus m-section.
let audioOffer = [
    "v=0",
    "o=- 4004986353 4004986353 IN IP4 0.0.0.0",
    "s=-",
    "t=0 0",
    "a=group:BUNDLE 0",
    "m=audio 36289 UDP/TLS/RTP/SAVPF 96",
    "c=IN IP4 127.0.0.1",
    "a=sendonly",
    "a=mid:0",
    "a=rtcp-mux",
    "a=ssrc:193762160 cname:63b8698c",
    "a=rtpmap:96 opus/48000/2",
    "a=candidate:1 1 udp 2130706431 127.0.0.1 36289 typ host",
    "a=ice-ufrag:MAol",
    "a=ice-pwd:sVRCnUWrfYIlAoQQWEy9KI",
    "a=fingerprint:sha-256 A7:8D:CF:46:02:5E:0D:26:6F:72:2F:DC:31:15:72:68:C0:CD:82:F7:60:ED:B5:E6:F2:B5:C2:D6:5A:8D:EC:4F",
    "a=setup:actpass",
    "",
].joined(separator: "\r\n")

/// An aiortc-like answer to a subscriber offer with one audio m-section.
func subscriberAnswer(to offer: String) -> String {
    let mid = offer.split(separator: "\r\n").first { $0.hasPrefix("a=mid:") }.map { String($0.dropFirst(6)) } ?? "?"
    return [
        "v=0",
        "o=- 1 1 IN IP4 0.0.0.0",
        "s=-",
        "t=0 0",
        "a=group:BUNDLE \(mid)",
        "m=audio 9 UDP/TLS/RTP/SAVPF 96",
        "c=IN IP4 0.0.0.0",
        "a=recvonly",
        "a=mid:\(mid)",
        "a=rtcp-mux",
        "a=rtpmap:96 opus/48000/2",
        "a=ice-ufrag:SUBs",
        "a=ice-pwd:sVRCnUWrfYIlAoQQWEy9KJ",
        "a=fingerprint:sha-256 A7:8D:CF:46:02:5E:0D:26:6F:72:2F:DC:31:15:72:68:C0:CD:82:F7:60:ED:B5:E6:F2:B5:C2:D6:5A:8D:EC:4F",
        "a=setup:active",
        "",
    ].joined(separator: "\r\n")
}

let endpoint = MediaEndpoint(
    fingerprint: .init(algorithm: .sha256, digest: Array(repeating: 0xAB, count: 32))!, workers: [[], []])

/// The subscriber offers among `effects` to `connection`.
private func subscriberOffers(_ effects: [RoomEffect], to connection: ConnectionID) -> [(sdp: String, version: Int)] {
    effects.compactMap {
        if case .send(connection, .subscriberOffer(let sdp, let version)) = $0 { (sdp, version) } else { nil }
    }
}

@Suite struct RoomMediaTests {
    /// The worker in `openTransport` must be an index into
    /// `MediaEndpoint.workers`: the media worker ignores any other. Rooms
    /// used to be numbered 0, 1, 2, ... without wrapping, so on a server
    /// with one worker every room after the first (a call room included)
    /// got no media at all.
    @Test func roomsAreSpreadOverTheWorkersInTurnAndWrapAround() throws {
        var directory = RoomDirectory(configuration: .init(media: endpoint), ids: SequentialIdentifiers())
        let now = Instant(nanoseconds: 1_000_000_000)
        var workers: [Int] = []
        for (index, room) in ["one", "two", "three", "four", "five"].enumerated() {
            let connection = ConnectionID(UInt64(index + 1))
            _ = directory.join(
                JoinRequest(identity: "p\(index)", room: room, grants: Grants(publish: true, subscribe: true), mode: nil),
                connection: connection, now: now)
            let effects = directory.handle(.publish(sdp: audioOffer), from: connection, now: now)
            for case .media(.openTransport(let opened, let worker, _, .publisher, _, _)) in effects {
                #expect(opened == room)
                workers.append(worker)
            }
        }
        #expect(workers == [0, 1, 0, 1, 0])
    }

    /// Both sides of a call leave a room together (the lobby on answer,
    /// the call room on hangup): the first one's departure must not offer
    /// the second a renegotiation of the subscriber transport the second's
    /// departure releases. It used to: a stale `subscriber-offer` followed
    /// `call-ended`, and answering it was an error.
    @Test func callPartiesGetNoSubscriberOfferForTheRoomTheyLeaveTogether() throws {
        var directory = RoomDirectory(configuration: .init(media: endpoint), ids: SequentialIdentifiers())
        let now = Instant(nanoseconds: 1_000_000_000)
        let (ann, ben) = (ConnectionID(1), ConnectionID(2))
        let grants = Grants(publish: true, subscribe: true)
        _ = directory.join(JoinRequest(identity: "ann", room: "lobby", grants: grants, mode: nil), connection: ann, now: now)
        _ = directory.join(JoinRequest(identity: "ben", room: "lobby", grants: grants, mode: nil), connection: ben, now: now)
        let benID = try #require(directory.participant(on: ben))

        /// Ann publishes; Ben answers the subscriber offer that follows.
        func annPublishesAndBenSubscribes() throws {
            let offers = subscriberOffers(directory.handle(.publish(sdp: audioOffer), from: ann, now: now), to: ben)
            let offer = try #require(offers.first)
            let effects = directory.handle(
                .subscriberAnswer(sdp: subscriberAnswer(to: offer.sdp), version: offer.version), from: ben, now: now)
            #expect(!effects.contains { if case .send(ben, .error) = $0 { true } else { false } }, "\(effects)")
        }

        try annPublishesAndBenSubscribes()
        let ringing = directory.handle(.call(to: benID), from: ann, now: now)
        let callID = try #require(
            ringing.lazy.compactMap { if case .send(ben, .incomingCall(let id, _, _)) = $0 { id } else { nil } }.first)
        // The caller knows the call id before the answer (to cancel it).
        #expect(ringing.contains(.send(ann, .callRinging(callID: callID, to: benID, identity: "ben"))))
        let started = directory.handle(.answerCall(callID), from: ben, now: now)
        #expect(subscriberOffers(started, to: ben).isEmpty, "\(started)")
        #expect(started.contains(.media(.releaseParticipant(room: "lobby", participant: benID))))

        try annPublishesAndBenSubscribes()
        let ended = directory.handle(.hangup(callID), from: ann, now: now)
        #expect(subscriberOffers(ended, to: ben).isEmpty, "\(ended)")
        #expect(ended.contains(.media(.releaseParticipant(room: "call/\(callID.rawValue)", participant: benID))))
    }
}

@Suite struct RoomMediaEventTests {
    /// Worker reports reach exactly the participants concerned: speakers
    /// the whole room, dynacast layers the publisher, stream state the
    /// subscriber; reports about someone who left, a track that is not
    /// theirs, or another room's participant are dropped.
    @Test func mediaEventsReachOnlyTheParticipantsConcerned() throws {
        var directory = RoomDirectory(configuration: .init(media: endpoint), ids: SequentialIdentifiers())
        let now = Instant(nanoseconds: 1_000_000_000)
        let (ann, ben, cat) = (ConnectionID(1), ConnectionID(2), ConnectionID(3))
        let grants = Grants(publish: true, subscribe: true)
        _ = directory.join(JoinRequest(identity: "ann", room: "lobby", grants: grants, mode: nil), connection: ann, now: now)
        _ = directory.join(JoinRequest(identity: "ben", room: "lobby", grants: grants, mode: nil), connection: ben, now: now)
        _ = directory.join(JoinRequest(identity: "cat", room: "other", grants: grants, mode: nil), connection: cat, now: now)
        let annID = try #require(directory.participant(on: ann))
        let benID = try #require(directory.participant(on: ben))
        let catID = try #require(directory.participant(on: cat))
        let published = directory.handle(.publish(sdp: audioOffer), from: ann, now: now)
        let trackID = try #require(
            published.lazy.compactMap { if case .send(ben, .trackPublished(_, let t)) = $0 { t.id } else { nil } }.first)
        // The publisher learns its own track id for the offer's mid.
        let own = published.lazy.compactMap { if case .send(ann, .publishAnswer(_, let t)) = $0 { t } else { nil } }.first
        #expect(own == [OwnTrack(id: trackID, kind: .audio, mid: "0")])
        let offer = try #require(subscriberOffers(published, to: ben).first)
        _ = directory.handle(
            .subscriberAnswer(sdp: subscriberAnswer(to: offer.sdp), version: offer.version), from: ben, now: now)

        let speakers = [SpeakerLevel(participantId: annID, level: 0.8), SpeakerLevel(participantId: catID, level: 0.9)]
        #expect(
            directory.handle(.activeSpeakers(room: "lobby", speakers: speakers))
                == [
                    .send(ann, .activeSpeakers([SpeakerLevel(participantId: annID, level: 0.8)])),
                    .send(ben, .activeSpeakers([SpeakerLevel(participantId: annID, level: 0.8)])),
                ])
        let layers = [LayerActivity(rid: "q", active: true), LayerActivity(rid: "f", active: false)]
        #expect(
            directory.handle(.publisherLayers(room: "lobby", publisher: annID, trackID: trackID, layers: layers))
                == [.send(ann, .publisherLayers(trackID: trackID, layers: layers))])
        #expect(directory.handle(.publisherLayers(room: "lobby", publisher: benID, trackID: trackID, layers: layers)).isEmpty)
        #expect(
            directory.handle(
                .streamState(room: "lobby", subscriber: benID, trackID: trackID, state: .paused, layer: nil, reason: .bandwidth))
                == [.send(ben, .streamState(trackID: trackID, state: .paused, layer: nil, reason: .bandwidth))])
        #expect(
            directory.handle(
                .streamState(room: "other", subscriber: benID, trackID: trackID, state: .active, layer: 0, reason: .bandwidth)
            ).isEmpty)
        #expect(directory.handle(.activeSpeakers(room: "gone", speakers: speakers)).isEmpty)
        _ = directory.handle(.leave, from: ben, now: now)
        #expect(
            directory.handle(
                .streamState(room: "lobby", subscriber: benID, trackID: trackID, state: .active, layer: 0, reason: .bandwidth)
            ).isEmpty)
    }
}

@Suite struct SubscriberOfferResumeTests {
    /// An offer that went out just before the subscriber's connection
    /// dropped is sent again, same version and SDP, when it resumes within
    /// the grace period; answering it then works.
    @Test func anUnansweredOfferIsSentAgainOnResume() throws {
        var directory = RoomDirectory(configuration: .init(media: endpoint), ids: SequentialIdentifiers())
        let now = Instant(nanoseconds: 1_000_000_000)
        let (ann, ben, benAgain) = (ConnectionID(1), ConnectionID(2), ConnectionID(3))
        let grants = Grants(publish: true, subscribe: true)
        _ = directory.join(JoinRequest(identity: "ann", room: "lobby", grants: grants, mode: nil), connection: ann, now: now)
        _ = directory.join(JoinRequest(identity: "ben", room: "lobby", grants: grants, mode: nil), connection: ben, now: now)
        let offer = try #require(
            subscriberOffers(directory.handle(.publish(sdp: audioOffer), from: ann, now: now), to: ben).first)
        _ = directory.disconnected(ben, now: now)
        let resumed = directory.join(
            JoinRequest(identity: "ben", room: "lobby", grants: grants, mode: nil), connection: benAgain,
            now: now + .seconds(5))
        let again = subscriberOffers(resumed, to: benAgain)
        #expect(again.count == 1)
        #expect(again.first?.sdp == offer.sdp)
        #expect(again.first?.version == offer.version)
        let answered = directory.handle(
            .subscriberAnswer(sdp: subscriberAnswer(to: offer.sdp), version: offer.version), from: benAgain,
            now: now + .seconds(5))
        #expect(!answered.contains { if case .send(_, .error) = $0 { true } else { false } }, "\(answered)")
        // Once answered, a later resume sends no offer.
        _ = directory.disconnected(benAgain, now: now + .seconds(6))
        let later = directory.join(
            JoinRequest(identity: "ben", room: "lobby", grants: grants, mode: nil), connection: ConnectionID(4),
            now: now + .seconds(7))
        #expect(subscriberOffers(later, to: ConnectionID(4)).isEmpty)
    }
}
