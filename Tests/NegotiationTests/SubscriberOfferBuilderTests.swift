import DTLS
import ICE
import SDP
import Testing
import Wire

@testable import Negotiation

/// The answer a browser gives to our subscriber offer, built with our SDP
/// types the way Chromium writes it: same sections and mids, recvonly for
/// what we send, inactive for the rest, DTLS active, its own credentials.
func chromiumAnswer(to offer: SessionDescription, setup: SetupRole = .active) -> SessionDescription {
    var media: [MediaDescription] = []
    for (i, m) in offer.media.enumerated() {
        var a: [Attribute] = []
        if i == 0 {
            a.append(.candidate(Candidate(foundation: "1", priority: 2_122_194_687, address: "198.51.100.20", port: 51000)))
        }
        a += [
            .iceUfrag("cLnT"), .icePwd("clientpasswordclientpw"),
            .fingerprint(Fingerprint(algorithm: "sha-256", bytes: Array(repeating: 0xC1, count: 32))), .setup(setup),
        ]
        if let mid = m.mid { a.append(.mid(mid)) }
        a += m.extensionMaps.map { .extmap($0) }
        a.append(.direction(m.direction == .sendonly ? .recvonly : .inactive))
        a += [.rtcpMux, .rtcpReducedSize]
        a += m.attributes.filter {
            switch $0 {
            case .rtpmap, .fmtp, .rtcpFeedback: true
            default: false
            }
        }
        media.append(
            MediaDescription(
                media: m.media, port: 9, formats: m.formats, connection: ConnectionData(address: "0.0.0.0"), attributes: a))
    }
    return SessionDescription(
        origin: Origin(sessionID: 777, sessionVersion: 2),
        attributes: [.group(Group(semantics: "BUNDLE", mids: offer.media.compactMap(\.mid))), .msidSemantic(MSIDSemantic())],
        media: media)
}

@Suite struct SubscriberOfferBuilderTests {
    let vp8 = CodecDescription.vp8(payloadType: PayloadType(rawValue: 96)!, rtxPayloadType: PayloadType(rawValue: 97)!)
    let opus = CodecDescription.opus(payloadType: PayloadType(rawValue: 111)!)

    func audio(_ id: String, ssrc: UInt32) -> OutgoingTrack {
        OutgoingTrack(kind: .audio, codec: opus, ssrc: SSRC(ssrc), streamID: "alice", trackID: id, cname: "alice-cname")
    }
    func video(_ id: String, ssrc: UInt32, rtx: UInt32) -> OutgoingTrack {
        OutgoingTrack(
            kind: .video, codec: vp8, ssrc: SSRC(ssrc), rtxSSRC: SSRC(rtx), streamID: "bob", trackID: id, cname: "bob-cname")
    }

    func builder() -> SubscriberOfferBuilder { SubscriberOfferBuilder(sessionID: 99, local: Fixture.local) }

    @Test func firstOfferCarriesTracksSSRCsAndServerTransport() throws {
        var b = builder()
        #expect(try b.add(track: audio("a1", ssrc: 1111)) == "0")
        #expect(try b.add(track: video("v1", ssrc: 2222, rtx: 3333)) == "1")
        #expect(b.needsRenegotiation)
        let built = try b.createOffer()
        #expect(b.state == .haveLocalOffer)
        #expect(!b.needsRenegotiation)
        let offer = try SessionDescription.parse(built.text)
        #expect(offer == built)

        #expect(offer.origin == Origin(sessionID: 99, sessionVersion: 1))
        #expect(
            offer.attributes == [
                .group(Group(semantics: "BUNDLE", mids: ["0", "1"])), .iceLite, .msidSemantic(MSIDSemantic(streamIDs: ["*"])),
            ])
        #expect(offer.media.map(\.direction) == [.sendonly, .sendonly])
        #expect(offer.media.map(\.formats) == [["111"], ["96", "97"]])
        for m in offer.media {
            #expect(m.has(.setup(.actpass)))
            #expect(m.has(.rtcpMux))
            #expect(m.extensionMaps == SubscriberOfferBuilder.defaultHeaderExtensions)
            #expect(m.iceUfrag == "SfuU")
        }
        #expect(offer.media[0].candidates.count == 1)
        #expect(offer.media[1].candidates.isEmpty)
        #expect(
            offer.media[0].sourceAttributes == [
                SourceAttribute(ssrc: SSRC(1111), name: "cname", value: "alice-cname"),
                SourceAttribute(ssrc: SSRC(1111), name: "msid", value: "alice a1"),
            ])
        let v = offer.media[1]
        #expect(v.msid == MediaStreamID(streamID: "bob", trackID: "v1"))
        #expect(v.sourceGroups == [SourceGroup(semantics: "FID", ssrcs: [SSRC(2222), SSRC(3333)])])
        #expect(v.sourceAttribute("cname", of: SSRC(3333)) == "bob-cname")
        #expect(v.sourceAttribute("msid", of: SSRC(2222)) == "bob v1")
        #expect(v.formatParameters.map(\.value) == ["97 apt=96"])
    }

    @Test func removedSectionIsRecycledByTheNextTrackOfItsKind() throws {
        var b = builder()
        try b.add(track: audio("a1", ssrc: 1))
        try b.add(track: video("v1", ssrc: 2, rtx: 3))
        let o1 = try b.createOffer()
        _ = try b.applyAnswer(chromiumAnswer(to: o1))

        // Add one: a new section.
        #expect(try b.add(track: video("v2", ssrc: 4, rtx: 5)) == "2")
        let o2 = try b.createOffer()
        #expect(o2.origin.sessionVersion == 2)
        #expect(o2.media.map(\.mid) == ["0", "1", "2"])
        _ = try b.applyAnswer(chromiumAnswer(to: o2))

        // Remove one: its section goes inactive, keeps its port, stays in BUNDLE.
        try b.remove(trackID: "v1")
        let o3 = try b.createOffer()
        #expect(o3.origin.sessionVersion == 3)
        #expect(o3.media.map(\.direction) == [.sendonly, .inactive, .sendonly])
        #expect(o3.media[1].port == 40000)
        #expect(o3.media[1].formats == ["96", "97"])
        #expect(o3.media[1].msid == nil)
        #expect(o3.media[1].sourceAttributes.isEmpty)
        #expect(o3.bundleMIDs == ["0", "1", "2"])
        _ = try b.applyAnswer(chromiumAnswer(to: o3))

        // An audio track does not take a video section; a video one does.
        #expect(try b.add(track: audio("a2", ssrc: 6)) == "3")
        #expect(try b.add(track: video("v3", ssrc: 7, rtx: 8)) == "1")
        let o4 = try SessionDescription.parse(try b.createOffer().text)
        #expect(o4.origin.sessionVersion == 4)
        #expect(o4.media.map(\.mid) == ["0", "1", "2", "3"])
        #expect(o4.media.map(\.media) == ["audio", "video", "video", "audio"])
        #expect(o4.media.map(\.direction) == [.sendonly, .sendonly, .sendonly, .sendonly])
        #expect(o4.media[1].msid == MediaStreamID(streamID: "bob", trackID: "v3"))
        #expect(o4.media[1].sourceGroups == [SourceGroup(semantics: "FID", ssrcs: [SSRC(7), SSRC(8)])])
        #expect(b.activeMIDs == ["0", "1", "2", "3"])
    }

    @Test func sectionRemovedButNotYetNegotiatedIsNotRecycled() throws {
        var b = builder()
        try b.add(track: video("v1", ssrc: 2, rtx: 3))
        _ = try b.applyAnswer(chromiumAnswer(to: try b.createOffer()))
        try b.remove(trackID: "v1")
        // The client has not seen "0" go inactive: a new section is appended.
        #expect(try b.add(track: video("v2", ssrc: 4, rtx: 5)) == "1")
    }

    @Test func oneOfferAtATimeAndRenegotiationFlag() throws {
        var b = builder()
        #expect(throws: NegotiationError.nothingToOffer) { try b.createOffer() }
        #expect(throws: NegotiationError.noOfferOutstanding) {
            try b.applyAnswer(SessionDescription(origin: Origin(sessionID: 1, sessionVersion: 1)))
        }
        try b.add(track: audio("a1", ssrc: 1))
        let offer = try b.createOffer()
        #expect(throws: NegotiationError.offerOutstanding) { try b.createOffer() }
        // A change while the offer is outstanding waits for the next round.
        try b.add(track: video("v1", ssrc: 2, rtx: 3))
        #expect(b.needsRenegotiation)
        let transport = try b.applyAnswer(chromiumAnswer(to: offer))
        #expect(b.state == .stable)
        #expect(b.needsRenegotiation)
        #expect(transport.setup == .active)
        #expect(transport.credentials == ICECredentials(ufrag: "cLnT", password: "clientpasswordclientpw"))
        #expect(transport.candidates.map(\.address) == [TransportAddress(ipv4: 198, 51, 100, 20, port: 51000)])
        let next = try b.createOffer()
        #expect(next.media.count == 2)
        try b.rollback()
        #expect(b.state == .stable)
        #expect(b.needsRenegotiation)
        #expect(throws: NegotiationError.noOfferOutstanding) { try b.rollback() }
    }

    @Test func duplicateAndUnknownTracksAreRefused() throws {
        var b = builder()
        try b.add(track: audio("a1", ssrc: 1))
        #expect(throws: NegotiationError.duplicateTrack("a1")) { try b.add(track: audio("a1", ssrc: 9)) }
        #expect(throws: NegotiationError.unknownTrack("zz")) { try b.remove(trackID: "zz") }
    }

    func offeredBuilder() throws -> (SubscriberOfferBuilder, SessionDescription) {
        var b = builder()
        try b.add(track: audio("a1", ssrc: 1))
        try b.add(track: video("v1", ssrc: 2, rtx: 3))
        let offer = try b.createOffer()
        return (b, offer)
    }

    @Test func answerWithWrongMIDOrderIsRefused() throws {
        var (b, offer) = try offeredBuilder()
        var answer = chromiumAnswer(to: offer)
        answer.media.swapAt(0, 1)
        #expect(throws: NegotiationError.answerMIDMismatch(index: 0, expected: "0", got: "1")) { try b.applyAnswer(answer) }
        #expect(b.state == .haveLocalOffer)
        var short = chromiumAnswer(to: offer)
        short.media.removeLast()
        #expect(throws: NegotiationError.answerMediaCount(expected: 2, got: 1)) { try b.applyAnswer(short) }
        // The offer is still outstanding: a good answer still applies.
        _ = try b.applyAnswer(chromiumAnswer(to: offer))
    }

    @Test func answerWithPayloadTypeWeDidNotOfferIsRefused() throws {
        var (b, offer) = try offeredBuilder()
        var answer = chromiumAnswer(to: offer)
        answer.media[1].formats.append("100")
        #expect(throws: NegotiationError.answerFormatNotOffered(mid: "1", format: "100")) { try b.applyAnswer(answer) }
        var noCodec = chromiumAnswer(to: offer)
        noCodec.media[1].formats = ["97"]
        #expect(throws: NegotiationError.answerNoCommonCodec(mid: "1")) { try b.applyAnswer(noCodec) }
    }

    @Test func answerWithPassiveSetupIsRefused() throws {
        var (b, offer) = try offeredBuilder()
        #expect(throws: NegotiationError.setupRoleConflict(mid: "0", .passive)) {
            try b.applyAnswer(chromiumAnswer(to: offer, setup: .passive))
        }
    }

    @Test func answerWithIncompatibleDirectionIsRefused() throws {
        var (b, offer) = try offeredBuilder()
        var sending = chromiumAnswer(to: offer)
        sending.media[0].attributes = sending.media[0].attributes.map { $0 == .direction(.recvonly) ? .direction(.sendrecv) : $0 }
        #expect(throws: NegotiationError.answerDirectionIncompatible(mid: "0", .sendrecv)) { try b.applyAnswer(sending) }
        var kind = chromiumAnswer(to: offer)
        kind.media[1].media = "audio"
        #expect(throws: NegotiationError.answerMediaKindMismatch(mid: "1")) { try b.applyAnswer(kind) }
        var noMux = chromiumAnswer(to: offer)
        noMux.media[1].attributes.removeAll { $0 == .rtcpMux }
        #expect(throws: NegotiationError.rtcpMuxRequired(mid: "1")) { try b.applyAnswer(noMux) }
        // Declining to receive (inactive) is a valid answer to sendonly.
        var declined = chromiumAnswer(to: offer)
        declined.media[1].attributes = declined.media[1].attributes.map {
            $0 == .direction(.recvonly) ? .direction(.inactive) : $0
        }
        _ = try b.applyAnswer(declined)
    }
    /// As Chromium 156 answers a section whose only codec it cannot decode
    /// (seen with H.264 `640c1f`): port 0, format 0, no rtpmap, its mid
    /// kept, left out of the answer's BUNDLE group.
    static func rejecting(_ index: Int, in answer: SessionDescription) -> SessionDescription {
        var a = answer
        a.media[index].port = 0
        a.media[index].formats = ["0"]
        a.media[index].attributes.removeAll {
            switch $0 {
            case .rtpmap, .fmtp, .rtcpFeedback: true
            default: false
            }
        }
        let rejectedMID = a.media[index].mid
        a.attributes = a.attributes.map {
            guard case .group(var g) = $0 else { return $0 }
            g.mids.removeAll { $0 == rejectedMID }
            return .group(g)
        }
        return a
    }

    @Test func aSectionTheClientCannotDecodeDropsOnlyItsTrackAndStaysRejected() throws {
        var b = builder()
        try b.add(track: audio("a1", ssrc: 1))
        let high = CodecDescription.h264(
            payloadType: PayloadType(rawValue: 100)!, rtxPayloadType: PayloadType(rawValue: 101)!, profileLevelID: "640c1f")
        try b.add(
            track: OutgoingTrack(
                kind: .video, codec: high, ssrc: SSRC(2), rtxSSRC: SSRC(3), streamID: "bob", trackID: "v1", cname: "bob"))
        let offer = try b.createOffer()
        _ = try b.applyAnswer(Self.rejecting(1, in: chromiumAnswer(to: offer)))
        #expect(b.state == .stable)
        #expect(b.refusedTrackIDs == ["v1"])
        #expect(b.activeMIDs == ["0"])
        #expect(b.mid(of: "v1") == nil)

        // The next video track gets a section of its own; the rejected one
        // is offered with port 0, inactive, outside BUNDLE.
        #expect(try b.add(track: video("v2", ssrc: 4, rtx: 5)) == "2")
        let next = try b.createOffer()
        #expect(next.media.map { $0.port == 0 } == [false, true, false])
        #expect(next.media[1].mid == "1")
        #expect(next.media[1].direction == .inactive)
        #expect(next.bundleMIDs == ["0", "2"])
        #expect(next.media[0].candidates.count == 1)
        // It stays rejected: an answer with a port there is refused.
        #expect(throws: NegotiationError.answerRevivedSection(mid: "1")) { try b.applyAnswer(chromiumAnswer(to: next)) }
        _ = try b.applyAnswer(Self.rejecting(1, in: chromiumAnswer(to: next)))
        #expect(b.refusedTrackIDs.isEmpty)
        #expect(b.activeMIDs == ["0", "2"])
    }

    @Test func theBundleTaggedSectionRejectedMovesTheCandidates() throws {
        var b = builder()
        let high = CodecDescription.h264(payloadType: PayloadType(rawValue: 100)!, profileLevelID: "640c1f")
        try b.add(
            track: OutgoingTrack(kind: .video, codec: high, ssrc: SSRC(2), streamID: "bob", trackID: "v1", cname: "bob"))
        try b.add(track: audio("a1", ssrc: 1))
        let offer = try b.createOffer()
        _ = try b.applyAnswer(Self.rejecting(0, in: chromiumAnswer(to: offer)))
        #expect(b.refusedTrackIDs == ["v1"])
        try b.remove(trackID: "a1")
        let next = try b.createOffer()
        #expect(next.media[0].port == 0 && next.media[0].candidates.isEmpty)
        #expect(next.media[1].candidates.count == 1)
        #expect(next.bundleMIDs == ["1"])
    }
}
