import DTLS
import Foundation
import ICE
import MediaRouter
import MediaWorker
import NetIO
import PeerSession
import RTP
import SDP
import SRTP
import Synchronization
import Testing
import Wire

/// What the offer from aiortc tells us: enough to build the server
/// transport and the answer.
struct AudioOffer {
    var mid: MID
    var credentials: ICECredentials
    var fingerprints: [CertificateFingerprint]
    var opus: PayloadType
    var candidateAddresses: [String]

    init(_ offer: SessionDescription) throws {
        let audio = try #require(offer.media.first { $0.media == "audio" }, "no audio m-section in the offer")
        mid = try #require(audio.mid, "the audio m-section has no a=mid")
        let transport = offer.transport(for: audio)
        credentials = ICECredentials(
            ufrag: try #require(transport.iceUfrag, "no a=ice-ufrag"),
            password: try #require(transport.icePwd, "no a=ice-pwd"))
        fingerprints = transport.fingerprints.compactMap { CertificateFingerprint(sdpValue: $0.value) }
        #expect(fingerprints.count == transport.fingerprints.count, "a fingerprint we cannot use: \(transport.fingerprints)")
        let map = try #require(audio.rtpMaps.first { $0.encodingName.lowercased() == "opus" }, "no Opus rtpmap")
        opus = map.payloadType
        candidateAddresses = audio.candidates.map(\.address)
    }
}

/// What the worker thread saw; written there, read by the test thread.
final class Observations: Sendable {
    struct Snapshot {
        var events: [PeerTransportEvent] = []
        var rtpFromPeer = 0
        var rtcpFromPeer = 0
        var echoed = 0
        var echoFailures = 0
        var payloadTypes: Set<UInt8> = []
    }
    let state = Mutex(Snapshot())
    var snapshot: Snapshot { state.withLock { $0 } }
}

/// The SFU side's answer, built with our SDP types: ICE-lite, DTLS server
/// (`a=setup:passive`), one bundled audio section that sends and receives
/// Opus on `ssrc`. aiortc routes incoming RTP by SSRC (or payload type),
/// not by mid, so the `a=ssrc` line matters.
func answer(
    to offer: AudioOffer, credentials: ICECredentials, fingerprint: CertificateFingerprint,
    ssrc: SSRC, address: SocketAddress
) -> SessionDescription {
    let audio = MediaDescription(
        media: "audio", port: address.port, formats: ["\(offer.opus.rawValue)"],
        connection: ConnectionData(address: address.ip),
        attributes: [
            .mid(offer.mid),
            .iceUfrag(credentials.ufrag),
            .icePwd(credentials.password),
            .fingerprint(Fingerprint(algorithm: fingerprint.algorithm.rawValue, bytes: fingerprint.digest)),
            .setup(.passive),
            .rtcpMux,
            .rtpmap(RTPMap(payloadType: offer.opus, encodingName: "opus", clockRate: 48000, channels: 2)),
            .direction(.sendrecv),
            .msid(MediaStreamID(streamID: "swiftlet", trackID: "swiftlet-audio")),
            .ssrc(SourceAttribute(ssrc: ssrc, name: "cname", value: "swiftlet")),
            .candidate(Candidate(foundation: "1", priority: 2_130_706_431, address: address.ip, port: address.port)),
            .endOfCandidates,
        ])
    return SessionDescription(
        origin: Origin(sessionID: 4_611_686_018_427_387_904, sessionVersion: 1),
        attributes: [.group(Group(semantics: Group.bundle, mids: [offer.mid])), .iceLite],
        media: [audio])
}

/// Interop with aiortc, an independent WebRTC implementation in Python
/// (installed in `.venv` by Scripts/setup): it offers one Opus track,
/// completes ICE, DTLS and SRTP against our server `PeerTransport` in a
/// real `UDPWorker`, and we echo its audio back under our own SSRC. Both
/// sides must see media: we decrypt aiortc's packets, aiortc decodes ours.
@Suite(.serialized) struct AiortcInteropTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(.timeLimit(.minutes(1)))
    func aiortcCompletesICEDTLSAndSRTPAndBothSidesReceiveAudio() throws {
        let python = Self.packageRoot.appending(path: ".venv/bin/python")
        try #require(
            FileManager.default.isExecutableFile(atPath: python.path),
            "\(python.path) is missing: run Scripts/setup, which creates the venv with aiortc (Scripts/test does so)")
        let script = Self.packageRoot.appending(path: "Scripts/interop/aiortc_peer.py")

        let started = ContinuousClock.now
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let localCredentials = ICECredentials.random()
        let ourSSRC = SSRC(0x5317_1E70)
        let id = TransportID(1)

        let seen = Observations()
        let engine = TransportEngine()
        engine.onEvent = { _, event in seen.state.withLock { $0.events.append(event) } }
        // Every RTP packet from aiortc goes back to it under our SSRC,
        // rewritten in place and re-protected with our keys.
        engine.onMedia = { [unowned engine] id, kind, buffer, _, transmit in
            switch kind {
            case .handled: return
            case .rtcp: seen.state.withLock { $0.rtcpFromPeer += 1 }
            case .rtp(let length):
                let packet = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length])
                let payloadType = (try? RTPHeader(parsing: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(packet))))?.payloadType
                let rewritten = RTPHeaderRewriter.setSSRC(ourSSRC, in: MutableBytes(packet))
                let sent = rewritten && engine.sendRTP(UnsafeRawBufferPointer(packet), to: id, output: transmit)
                seen.state.withLock {
                    $0.rtpFromPeer += 1
                    if let payloadType { $0.payloadTypes.insert(payloadType.rawValue) }
                    if sent { $0.echoed += 1 } else { $0.echoFailures += 1 }
                }
            }
        }
        let worker = try UDPWorker(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, engine: engine)
        let thread = WorkerThread { worker.run() }
        defer { worker.requestStop(); thread.join() }

        let peer = try JSONLineProcess(
            executable: python, arguments: [script.path, "--measure", "3"],
            workingDirectory: Self.packageRoot)
        defer { peer.terminate() }

        let offerMessage = try peer.receive("aiortc's offer", timeout: .seconds(15))
        #expect(offerMessage["type"] as? String == "offer")
        let offerText = try #require(offerMessage["sdp"] as? String, "the offer line has no sdp")
        let offer = try AudioOffer(SessionDescription.parse(offerText))
        // aiortc offers sha-256, sha-384 and sha-512 (FACTS.md).
        #expect(Set(offer.fingerprints.map(\.algorithm)) == [.sha256, .sha384, .sha512])
        #expect(offer.candidateAddresses == ["127.0.0.1"])

        worker.mailbox.post { engine, now, _ in
            guard
                let transport = try? PeerTransport(
                    role: .server, certificate: certificate,
                    localCredentials: localCredentials, now: now)
            else { return }
            transport.setRemoteParameters(credentials: offer.credentials, fingerprints: offer.fingerprints, now: now)
            engine.add(transport, id: id)
        }
        let answerText = answer(
            to: offer, credentials: localCredentials, fingerprint: certificate.fingerprint(.sha256),
            ssrc: ourSSRC, address: worker.localAddress
        ).text
        try peer.send(["type": "answer", "sdp": answerText])

        let result = try peer.receive("aiortc's result", timeout: .seconds(30))
        let elapsed = ContinuousClock.now - started
        let s = seen.snapshot
        let framesReceived = (result["framesReceived"] as? Int) ?? -1
        let stderr = peer.stderrText
        print(
            "aiortc interop: \(result); we decrypted \(s.rtpFromPeer) RTP and \(s.rtcpFromPeer) RTCP, echoed \(s.echoed) (\(s.echoFailures) not sent); events \(s.events); \(elapsed)"
        )

        #expect(result["connected"] as? Bool == true, "aiortc did not connect: \(result)\n\(stderr)")
        #expect(result["iceConnectionState"] as? String == "completed" || result["iceConnectionState"] as? String == "connected")
        let profiles = s.events.compactMap { if case .connected(let p) = $0 { p } else { nil } }
        #expect(profiles.count == 1, "our transport's events: \(s.events)")
        // aiortc offers AES_256_GCM, AES_128_GCM, CM_80; our server prefers
        // AES_128_GCM and does not implement the 256-bit profile.
        #expect(profiles.first == .aeadAES128GCM)
        #expect(result["srtpProfile"] as? String == "SRTP_AEAD_AES_128_GCM")
        #expect(!s.events.contains { if case .failed = $0 { true } else { false } }, "events: \(s.events)")
        // 3 s of 20 ms Opus frames is 150 packets; allow for start-up.
        #expect(s.rtpFromPeer >= 50, "decrypted only \(s.rtpFromPeer) RTP packets from aiortc\n\(stderr)")
        #expect(s.echoed == s.rtpFromPeer, "\(s.echoFailures) echoes had no route")
        #expect(s.payloadTypes == [offer.opus.rawValue])
        #expect(framesReceived >= 50, "aiortc decoded only \(framesReceived) frames from us\n\(stderr)")
        #expect(elapsed < .seconds(20))
    }
}
