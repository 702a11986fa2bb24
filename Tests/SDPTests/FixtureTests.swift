import Foundation
import Testing
import Wire

@testable import SDP

/// Offers captured from real programs by Scripts/capture-fixtures.
func fixture(_ name: String) throws -> SessionDescription {
    let url = try #require(Bundle.module.url(forResource: name, withExtension: "sdp", subdirectory: "Fixtures"))
    let bytes = [UInt8](try Data(contentsOf: url))
    return try SessionDescription.parse(bytes.span.bytes)
}

@Suite struct ChromiumPublishOfferTests {
    @Test func bundlesAudioAndVideo() throws {
        let sdp = try fixture("chromium-publish-simulcast")
        #expect(sdp.bundleMIDs == ["0", "1"])
        #expect(sdp.media.map(\.media) == ["audio", "video"])
        #expect(sdp.media.map(\.mid) == ["0", "1"])
        #expect(sdp.media.map(\.direction) == [.sendonly, .sendonly])
        #expect(sdp.attributes.contains(.extmapAllowMixed))
    }

    @Test func videoOffersThreeSimulcastRIDs() throws {
        let video = try #require(try fixture("chromium-publish-simulcast").media.last)
        #expect(
            video.rids == [
                RIDDescription(id: "q", direction: .send), RIDDescription(id: "h", direction: .send),
                RIDDescription(id: "f", direction: .send),
            ])
        let simulcast = try #require(video.simulcast)
        #expect(simulcast.sendRIDs == ["q", "h", "f"])
        #expect(simulcast.recv.isEmpty)
        #expect(simulcast.send.allSatisfy { $0.count == 1 && !$0[0].paused })
    }

    @Test func videoHasVP8AndH264WithTransportCC() throws {
        let video = try #require(try fixture("chromium-publish-simulcast").media.last)
        let vp8 = try #require(video.rtpMaps.first { $0.encodingName == "VP8" })
        #expect(vp8 == RTPMap(payloadType: PayloadType(rawValue: 96)!, encodingName: "VP8", clockRate: 90000))
        let h264 = video.rtpMaps.filter { $0.encodingName == "H264" }
        #expect(h264.count == 6)
        #expect(video.rtcpFeedback.contains(RTCPFeedback(payloadType: vp8.payloadType, type: "transport-cc")))
        #expect(video.rtcpFeedback.contains(RTCPFeedback(payloadType: vp8.payloadType, type: "nack", parameter: "pli")))
        let fmtp = try #require(video.formatParameters.first { $0.payloadType.rawValue == 102 })
        #expect(fmtp["profile-level-id"] == "42001f")
        #expect(fmtp["packetization-mode"] == "1")
    }

    @Test func videoNegotiatesMIDAndRIDHeaderExtensions() throws {
        let video = try #require(try fixture("chromium-publish-simulcast").media.last)
        #expect(video.extensionID(for: ExtensionMap.sdesMID) == 4)
        #expect(video.extensionID(for: ExtensionMap.sdesRTPStreamID) == 10)
        #expect(video.extensionID(for: ExtensionMap.sdesRepairedRTPStreamID) == 11)
        #expect(video.extensionID(for: ExtensionMap.transportWideCC) == 3)
    }

    @Test func audioHasOpusStereoAndOneSSRC() throws {
        let audio = try #require(try fixture("chromium-publish-simulcast").media.first)
        #expect(
            audio.rtpMaps.first
                == RTPMap(
                    payloadType: PayloadType(rawValue: 111)!, encodingName: "opus",
                    clockRate: 48000, channels: 2))
        #expect(audio.formatParameters.first?.raw == "minptime=10;useinbandfec=1")
        #expect(Set(audio.sourceAttributes.map(\.ssrc)).count == 1)
        #expect(audio.sourceAttributes.first?.name == "cname")
    }

    @Test func candidatesAreHostWithExtensionsKept() throws {
        let audio = try #require(try fixture("chromium-publish-simulcast").media.first)
        let first = try #require(audio.candidates.first)
        #expect(first.type == .host)
        #expect(first.address == "127.0.0.1")
        #expect(first.port == audio.port)
        #expect(first.generation == 0)
        #expect(first.extensionValue("network-cost") == "50")
        #expect(audio.candidates.contains { $0.tcpType == "active" })
    }

    @Test func transportParametersAreMediaLevel() throws {
        let sdp = try fixture("chromium-publish-simulcast")
        let t = sdp.transport(for: sdp.media[1])
        #expect(t.iceUfrag == sdp.media[1].iceUfrag)
        #expect(t.setup == .actpass)
        #expect(t.fingerprints.map(\.algorithm) == ["sha-256"])
        #expect(t.fingerprints.first?.bytes.count == 32)
    }
}

@Suite struct OtherFixtureTests {
    @Test func chromiumRecvOnlyOfferHasTwoRecvOnlySections() throws {
        let sdp = try fixture("chromium-recvonly")
        #expect(sdp.media.map(\.direction) == [.recvonly, .recvonly])
        #expect(sdp.media.allSatisfy { $0.simulcast == nil && $0.sourceAttributes.isEmpty })
    }

    @Test func chromiumSendRecvOfferHasADataChannelSection() throws {
        let sdp = try fixture("chromium-sendrecv")
        let app = try #require(sdp.media.last)
        #expect(app.media == "application")
        #expect(app.proto == "UDP/DTLS/SCTP")
        #expect(app.formats == ["webrtc-datachannel"])
        #expect(app.has(.sctpPort(5000)))
        #expect(app.has(.maxMessageSize(262_144)))
        #expect(sdp.media[1].sourceGroups.first?.semantics == SourceGroup.flowIdentification)
    }

    @Test func aiortcOfferHasThreeFingerprintsPerSection() throws {
        let sdp = try fixture("aiortc-offer")
        for m in sdp.media {
            #expect(m.fingerprints.map(\.algorithm) == ["sha-256", "sha-384", "sha-512"])
            #expect(m.fingerprints.map(\.bytes.count) == [32, 48, 64])
        }
        #expect(sdp.attributes.contains(.msidSemantic(MSIDSemantic(semantic: "WMS", streamIDs: ["*"]))))
    }

    @Test func aiortcOfferHasSSRCLinesAndFIDGroup() throws {
        let video = try #require(try fixture("aiortc-offer").media.last)
        let group = try #require(video.sourceGroups.first)
        #expect(group.semantics == "FID")
        #expect(group.ssrcs.count == 2)
        #expect(video.sourceAttributes.map(\.ssrc) == group.ssrcs)
        #expect(video.sourceAttributes.allSatisfy { $0.name == "cname" })
        #expect(video.has(.endOfCandidates))
        let candidate = try #require(video.candidates.first)
        #expect(candidate.address == "127.0.0.1")
        #expect(candidate.priority == 2_130_706_431)
    }

    @Test(arguments: [
        "chromium-publish-simulcast", "chromium-recvonly", "chromium-sendrecv", "aiortc-offer",
        "firefox-publish-simulcast-balanced", "firefox-publish-simulcast-max-bundle", "firefox-recvonly-max-bundle",
    ])
    func reserialisedFixtureParsesToTheSameValue(name: String) throws {
        let sdp = try fixture(name)
        let again = try SessionDescription.parse(sdp.text)
        #expect(again == sdp)
        #expect(again.text == sdp.text)
    }

    /// Chromium writes every line the way we do, so its offers come back
    /// byte for byte. (aiortc does not: it writes `a=msid-semantic:WMS`
    /// without the space libwebrtc and we put after the colon.)
    @Test(arguments: ["chromium-publish-simulcast", "chromium-recvonly", "chromium-sendrecv"])
    func fixtureReserialisesByteExact(name: String) throws {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "sdp", subdirectory: "Fixtures"))
        let original = try String(contentsOf: url, encoding: .utf8)
        #expect(try SessionDescription.parse(original).text == original)
    }

    /// Firefox under max-bundle: the second section has port 0 and
    /// `a=bundle-only` (RFC 8843 section 6), so it is bundled, not
    /// rejected; under balanced both sections have a port.
    @Test func firefoxMaxBundleOfferMarksItsSecondSectionBundleOnly() throws {
        let maxBundle = try fixture("firefox-publish-simulcast-max-bundle")
        #expect(maxBundle.media.map(\.port) == [9, 0])
        #expect(maxBundle.media.map(\.isBundleOnly) == [false, true])
        #expect(maxBundle.media.map(\.isRejected) == [false, false])
        #expect(maxBundle.bundleMIDs == ["0", "1"])
        let balanced = try fixture("firefox-publish-simulcast-balanced")
        #expect(balanced.media.map(\.port) == [9, 9])
        #expect(balanced.media.map(\.isBundleOnly) == [false, false])
        var disabled = maxBundle.media[1]
        disabled.attributes.removeAll { $0 == .bundleOnly }
        #expect(disabled.isRejected)
    }
}
