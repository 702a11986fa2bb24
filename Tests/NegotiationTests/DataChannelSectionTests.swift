import Negotiation
import SDP
import Testing
import Wire

/// RFC 8841: the data channel section of a room participant's offer.
@Suite struct DataChannelSectionTests {
    @Test func roomPublisherAcceptsChromiumsDataChannelSectionBundled() throws {
        let offer = try PublishOffer(Fixture.description("chromium-sendrecv.sdp"), acceptsDataChannels: true)
        let data = try #require(offer.dataChannel)
        #expect(data.mid == "2" && data.remotePort == 5000 && data.remoteMaximumMessageSize == 262_144)
        // We send at most our own limit even to a peer that takes more.
        #expect(data.sendLimit == 65_536)
        var answerer = PublishAnswerer(sessionID: 1)
        let answer = try SessionDescription.parse(answerer.makeAnswer(to: offer, local: Fixture.local).text)
        #expect(answer.bundleMIDs == ["0", "1", "2"])
        let section = answer.media[2]
        #expect(section.mediaLine == "application 40000 UDP/DTLS/SCTP webrtc-datachannel")
        #expect(section.has(.sctpPort(5000)) && section.has(.maxMessageSize(65_536)))
        #expect(section.has(.setup(.passive)) && section.mid == "2")
    }

    @Test func whipRejectsTheSameSectionWithPortZero() throws {
        let offer = try PublishOffer(Fixture.description("chromium-sendrecv.sdp"), acceptsDataChannels: false)
        #expect(offer.dataChannel == nil)
        var answerer = PublishAnswerer(sessionID: 1)
        let answer = answerer.makeAnswer(to: offer, local: Fixture.local)
        #expect(answer.media[2].port == 0)
    }

    @Test func absentAttributesMeanPort5000And64KiBAndZeroMeansNoLimit() throws {
        var d = try Fixture.description("chromium-sendrecv.sdp")
        d.media[2].attributes.removeAll { if case .sctpPort = $0 { true } else { false } }
        d.media[2].attributes = d.media[2].attributes.map {
            if case .maxMessageSize = $0 { .maxMessageSize(0) } else { $0 }
        }
        let data = try #require(try PublishOffer(d, acceptsDataChannels: true).dataChannel)
        #expect(data.remotePort == 5000 && data.remoteMaximumMessageSize == 0 && data.sendLimit == 65_536)
    }

    @Test func onlyTheFirstDataChannelSectionIsAccepted() throws {
        var d = try Fixture.description("chromium-sendrecv.sdp")
        var second = d.media[2]
        second.attributes = second.attributes.map { $0 == .mid("2") ? .mid("3") : $0 }
        d.media.append(second)
        d.attributes = d.attributes.map {
            if case .group = $0 { .group(Group(semantics: Group.bundle, mids: ["0", "1", "2", "3"])) } else { $0 }
        }
        let offer = try PublishOffer(d, acceptsDataChannels: true)
        #expect(offer.dataChannel?.mid == "2")
        guard case .rejected(let r) = offer.sections[3] else { Issue.record("\(offer.sections[3])"); return }
        #expect(r.reason == .unsupportedMedia)
    }
}
