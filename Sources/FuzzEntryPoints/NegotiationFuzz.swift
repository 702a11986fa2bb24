import DTLS
import ICE
import Negotiation
import SDP
import Wire

extension FuzzEntryPoints {
    /// An SDP offer through the whole negotiation the server runs on it, as
    /// `RoomDirectory` does for WebSocket publish, WHIP and WHEP: parsed,
    /// read as a publish offer and answered, its sending tracks offered to
    /// a subscriber (whose answer roombot's builder writes and the server
    /// applies), read as a WHEP playback offer and answered; and the same
    /// bytes applied as a subscriber's answer to a server offer. Everything
    /// the server writes must parse again and keep the offer's m-section
    /// count (RFC 8829 section 5.3.1); nothing may trap.
    public static func negotiation(_ data: UnsafeRawBufferPointer) {
        guard let description = try? SessionDescription.parse(RawSpan(_unsafeBytes: data)) else { return }
        let local = fuzzLocalTransport
        if let offer = try? PublishOffer(description) {
            var answerer = PublishAnswerer(sessionID: 1)
            let answer = answerer.makeAnswer(to: offer, local: local)
            checkOurDescription(answer, sections: description.media.count)
            offerToSubscriber(offer.tracks.filter(\.isSending), local: local)
        }
        if let playback = try? PlaybackOffer(description) {
            var answerer = PlaybackAnswerer(sessionID: 2)
            let answer = answerer.makeAnswer(to: playback, sources: fuzzPlaybackSources, local: local)
            checkOurDescription(answer.description, sections: description.media.count)
            precondition(answer.assignments.count <= fuzzPlaybackSources.count)
        }
        // The bytes as a (hostile) subscriber's answer to our offer.
        var builder = SubscriberOfferBuilder(sessionID: 3, local: local)
        for source in fuzzPlaybackSources {
            _ = try? builder.add(
                track: OutgoingTrack(
                    kind: source.kind, codec: source.codec, ssrc: source.ssrc, streamID: source.streamID,
                    trackID: source.trackID, cname: source.cname))
        }
        if (try? builder.createOffer()) != nil { _ = try? builder.applyAnswer(description) }
    }

    /// The published tracks forwarded to one subscriber: our offer, the
    /// answer roombot's builder writes to it, applied by the server.
    private static func offerToSubscriber(_ tracks: [PublishedTrackDescription], local: LocalTransportParameters) {
        var builder = SubscriberOfferBuilder(sessionID: 4, local: local)
        var ssrc: UInt32 = 0x1000
        for (i, track) in tracks.enumerated() {
            guard let codec = track.codecs.first else { continue }
            ssrc += 2
            let outgoing = OutgoingTrack(
                kind: track.kind, codec: codec, ssrc: SSRC(ssrc), rtxSSRC: codec.rtxPayloadType == nil ? nil : SSRC(ssrc + 1),
                streamID: "PA_fuzz", trackID: "TR_\(i)", cname: "fuzz")
            _ = try? builder.add(track: outgoing)
        }
        guard let offer = try? builder.createOffer() else { return }
        checkOurDescription(offer, sections: offer.media.count)
        var client = ClientAnswerBuilder(sessionID: 5, local: fuzzClientTransport)
        guard let answer = try? client.makeAnswer(to: offer) else { return }
        _ = try? builder.applyAnswer(answer.description)
    }

    /// A description we produced parses again, equal, with `sections`
    /// m-sections.
    private static func checkOurDescription(_ description: SessionDescription, sections: Int) {
        precondition(description.media.count == sections, "an answer must keep the offer's m-sections")
        let bytes = description.bytes
        guard bytes.count <= SessionDescription.maxBytes else { return }
        let again = bytes.withUnsafeBytes { try? SessionDescription.parse(RawSpan(_unsafeBytes: $0)) }
        precondition(again != nil, "a description we wrote does not parse")
    }

    private static let fuzzLocalTransport = LocalTransportParameters(
        credentials: ICECredentials(ufrag: "FuzU", password: "0123456789abcdefghijklmn"),
        fingerprint: CertificateFingerprint(algorithm: .sha256, digest: Array(0..<32))!,
        candidates: [ICECandidate.host(TransportAddress(ipv4: 192, 0, 2, 10, port: 40000))])

    private static let fuzzClientTransport = LocalTransportParameters(
        credentials: ICECredentials(ufrag: "BotU", password: "botpasswordbotpasswordbo"),
        fingerprint: CertificateFingerprint(algorithm: .sha256, digest: Array(repeating: 0xB0, count: 32))!,
        candidates: [ICECandidate.host(TransportAddress(ipv4: 192, 0, 2, 20, port: 50000))], isICELite: false)

    /// What a publisher in the room offers to a WHEP player: Opus, VP8 and
    /// H.264 (the codecs the server forwards).
    private static let fuzzPlaybackSources: [PlaybackSource] = [
        PlaybackSource(
            trackID: "TR_a", streamID: "PA_pub", codec: .opus(payloadType: PayloadType(masking: 111)), ssrc: SSRC(0xA1),
            cname: "pub"),
        PlaybackSource(
            trackID: "TR_v", streamID: "PA_pub",
            codec: .vp8(payloadType: PayloadType(masking: 96), rtxPayloadType: PayloadType(masking: 97)),
            ssrc: SSRC(0xB1), cname: "pub"),
    ]
}
