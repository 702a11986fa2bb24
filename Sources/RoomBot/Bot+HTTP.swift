import BotMedia
import Foundation
import HTTPClient
import Negotiation
import NetIO
import SDP
import Wire

/// WHIP and WHEP (`--whip`, `--whep`): the publish offer and the playback
/// offer go as HTTP POSTs instead of room-protocol messages.
extension Bot {
    func post(path: String, sdp: String, purpose: HTTPPurpose) {
        lastPost = (path, sdp, purpose)
        do {
            http = try HTTPExchange(
                to: server.endpoint, method: "POST", path: path,
                headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/sdp")], body: Array(sdp.utf8))
            httpPurpose = purpose
            context.registerHTTP(self)
        } catch {
            connectFailed("\(error)", now: MonotonicClock.now())
        }
    }

    /// WHEP: a subscriber transport and a recvonly offer for the room's
    /// first publisher.
    func startPlayback(now: Instant) {
        if subscriber == nil {
            guard let (t, local) = openTransport(now: now) else { return }
            subscriber = t
            // WHEP viewers are the bench's light subscribers: before this
            // they decrypted every packet (issue #14).
            t.countsHeadersOnly = light
            playbackBuilder = ClientOfferBuilder(sessionID: UInt64.random(in: 1...UInt64.max, using: &random), local: local)
            playbackBuilder?.videoCodec = context.options.offeredVideoCodec
        }
        guard var builder = playbackBuilder else { return }
        let offer = builder.playbackOffer(audio: true, video: !context.options.audioOnly)
        playbackBuilder = builder
        pendingOffer = offer
        post(path: "/whep/\(record.room)", sdp: offer.text, purpose: .whep)
    }

    /// The outcome of the request in flight.
    func handleHTTP(_ outcome: HTTPExchange.Outcome, now: Instant) {
        let purpose = httpPurpose
        httpPurpose = .none
        // An exchange dropped at the connect deadline: nobody waits for it.
        guard purpose != .none else { return }
        guard case .response(let head, let body) = outcome else {
            if case .failed(let reason) = outcome, purpose != .delete {
                if reason.hasPrefix("connect"), record.joinedAt == nil {
                    connectFailed(reason, now: now)
                } else {
                    record.error("http_failed", reason)
                }
            }
            return
        }
        switch (purpose, head.status) {
        case (.delete, _), (.none, _):
            break
        case (.whep, 409):
            // Nothing published yet: post again after Retry-After.
            record.retries += 1
            let seconds = head.headers["Retry-After"].flatMap { Int64($0) } ?? 2
            retryAt = now + .seconds(min(max(seconds, 1), 10))
        case (.whip, 201), (.whep, 201):
            record.joinedAt = now
            sessionLocation = head.headers["Location"]
            let sdp = String(decoding: body, as: UTF8.self)
            if purpose == .whip { applyPublishAnswer(sdp, now: now) } else { applyPlaybackAnswer(sdp, now: now) }
        case (_, let status):
            // A wrong path or a refused token: trying again changes nothing.
            record.error("\(purpose == .whip ? "whip" : "whep")_\(status)", "HTTP \(status) on \(lastPost?.path ?? "?")")
            if record.joinedAt == nil { record.gaveUp = true }
        }
    }

    func applyPlaybackAnswer(_ sdp: String, now: Instant) {
        guard let builder = playbackBuilder, let offer = pendingOffer, let subscriber else { return }
        do {
            let description = try SessionDescription.parse(sdp)
            let answer = try builder.applyAnswer(description, to: offer)
            var tracks: [AnnouncedTrack] = []
            for m in description.media where !m.isRejected && m.direction == .sendonly {
                guard let mid = m.mid, let kind = MediaKind(rawValue: m.media) else { continue }
                // With the RTX SSRC of the FID group: retransmissions of
                // lost packets come on it only (unwrapped in RepairStreams by the
                // server's RTXPacket.unwrap).
                tracks.append(
                    AnnouncedTrack(
                        mid: mid, kind: kind, codec: kind == .audio ? ClientOfferBuilder.opus : builder.videoCodec,
                        sentIn: m))
            }
            announce(tracks, absCaptureTimeIDs: absCaptureTimeIDs(in: description), now: now)
            useTransportFeedback(in: description)
            let t = answer.transport
            subscriber.setRemote(credentials: t.credentials, fingerprints: t.fingerprints, candidates: t.candidates, now: now)
        } catch {
            record.error("whep_answer_refused")
        }
    }
}
