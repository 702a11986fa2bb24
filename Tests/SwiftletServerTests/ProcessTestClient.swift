import DTLS
import Foundation
import HTTPClient
import ICE
import Negotiation
import NetIO
import PeerSession
import SDP
import Signaling
import Testing
import Wire

@testable import RoomBot

/// One participant of a real `swiftlet serve` process, from roombot's own
/// parts: its room WebSocket (`SignalingClient`) and, once it publishes
/// audio, its publisher transport (`BotTransport`: full ICE, DTLS client).
/// Everything is polled from the test's thread; every wait is bounded.
final class ProcessTestClient {
    let signaling: SignalingClient
    private(set) var messages: [[String: Any]] = []
    /// Why the WebSocket ended ("websocket closed 1001 ..." for a close
    /// frame), nil while open.
    private(set) var closedReason: String?
    private(set) var publisher: BotTransport?
    private let certificate: DTLSCertificate
    private let batch = DatagramBatch(capacity: 8, slotSize: 2048)

    init(port: UInt16, ip: String = "127.0.0.1") throws {
        var random = SystemRandomNumberGenerator()
        let endpoint = ServerEndpoint(
            address: try #require(SocketAddress(ip: ip, port: port)), hostHeader: "\(ip):\(port)", serverName: ip, tls: nil)
        signaling = try SignalingClient(to: endpoint, path: "/rtc", random: &random)
        certificate = try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970))
    }

    /// A dev-mode token (`swiftlet serve --dev` trusts devkey/devsecret).
    static func devToken(identity: String, room: String) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: "devkey", subject: identity, notBefore: now - 5, expiresAt: now + 600, room: room,
                grants: AccessTokenGrants(publish: true, subscribe: true)),
            secret: "devsecret")
    }

    /// Pumps the sockets for up to `timeout` or until `done` holds.
    @discardableResult
    func run(for timeout: Duration, until done: () -> Bool = { false }) -> Bool {
        let end = MonotonicClock.now() + timeout
        while MonotonicClock.now() < end {
            if done() { return true }
            step()
        }
        return done()
    }

    func send(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object) else { return }
        signaling.send(text: String(decoding: data, as: UTF8.self))
    }

    func message(_ type: String) -> [String: Any]? { messages.first { $0["type"] as? String == type } }

    /// Joins `room`; true once `joined` arrived.
    func join(room: String, identity: String) -> Bool {
        guard run(for: .seconds(5), until: { signaling.phase == .open }) else { return false }
        send(["type": "join", "token": Self.devToken(identity: identity, room: room)])
        return run(for: .seconds(5), until: { message("joined") != nil })
    }

    /// Joins `room` and publishes one audio track; true once DTLS is up.
    func joinAndPublishAudio(room: String, identity: String) throws -> Bool {
        guard join(room: room, identity: identity) else { return false }
        let now = MonotonicClock.now()
        let transport = try BotTransport(bindIP: "127.0.0.1", certificate: certificate, now: now, batch: batch)
        publisher = transport
        let local = LocalTransportParameters(
            credentials: transport.transport.localCredentials, fingerprint: certificate.fingerprint(),
            candidates: [ICECandidate.host(transport.local)], isICELite: false)
        var builder = ClientOfferBuilder(sessionID: 1, local: local)
        let offer = builder.publishOffer(
            ClientPublication(audioSSRC: SSRC(0x1234_5678), videoLayers: [], streamID: identity, cname: identity))
        send(["type": "publish", "sdp": offer.text])
        guard run(for: .seconds(5), until: { message("publish-answer") != nil }),
            let sdp = message("publish-answer")?["sdp"] as? String
        else { return false }
        let answer = try builder.applyAnswer(try SessionDescription.parse(sdp), to: offer)
        let t = answer.transport
        transport.setRemote(credentials: t.credentials, fingerprints: t.fingerprints, candidates: t.candidates, now: now)
        return run(for: .seconds(10), until: { transport.isConnected })
    }

    private func step() {
        var fds = [pollfd(fd: signaling.descriptor, events: Int16(POLLIN | (signaling.wantsWritable ? POLLOUT : 0)), revents: 0)]
        if let p = publisher { fds.append(pollfd(fd: p.descriptor, events: Int16(POLLIN), revents: 0)) }
        _ = poll(&fds, nfds_t(fds.count), 20)
        if signaling.phase != .closed {
            let ready = fds[0].revents
            for event in signaling.handleReady(
                readable: ready & Int16(POLLIN) != 0, writable: ready & Int16(POLLOUT) != 0,
                hangup: ready & Int16(POLLHUP | POLLERR) != 0)
            {
                switch event {
                case .opened: break
                case .text(let text):
                    if let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] {
                        messages.append(object)
                    }
                case .closed(let reason, _): closedReason = reason
                }
            }
        }
        publisher?.pump(now: MonotonicClock.now()) { _, _, _ in }
    }
}

/// curl's view of one HTTP request: status line and headers (`-i`), body.
func curl(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-i", "--max-time", "5"] + arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}
