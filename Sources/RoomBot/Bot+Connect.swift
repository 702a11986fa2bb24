import Signaling
import Wire

/// A room WebSocket that dropped after it opened, being opened and joined
/// again: the same URL, a token for the same identity and room, so the
/// server resumes the participant (docs/PROTOCOL.md: within its 20 s grace
/// period, with the transports it kept; ICE and DTLS go on untouched).
struct SignalingReconnection {
    /// When it dropped: attempts go on until `--connect-timeout` after it.
    let since: Instant
    /// Why it closed, for the error if it never comes back.
    let reason: String
    var attempts = 0
    var lastFailure: String?
}

/// Connecting, and what counts as a signalling failure.
///
/// A connection that fails before the server answers (the TCP connect:
/// refused, unreachable, timed out) is tried again with a backoff until
/// `--connect-timeout` after the bot started: a server that is still
/// coming up is reached, one that is down fails the run at that deadline
/// instead of never. The first failure of the process is printed at once,
/// with its errno text. A server that answers with an HTTP status (a wrong
/// path, a refused token) is not tried again: the answer would not change.
///
/// A room WebSocket that closes after it opened, when the bot did not
/// start the close, is reconnected with the same backoff until
/// `--connect-timeout` after the drop (10 s by default, within the
/// server's 20 s grace period), then counted `signaling_closed` as
/// before. Not reconnected: after `going-away` (the server drains and
/// refuses new WebSockets with 503; its drain is the run's failure), and
/// a close with 1008 (the server closed it on purpose: another connection
/// took over the identity, or no join came in time).
extension Bot {
    /// The first retry after 250 ms, doubling to at most 2 s.
    static func backoff(afterFailures n: Int) -> Duration {
        .milliseconds(min(250 << min(max(n - 1, 0), 3), 2000))
    }

    var connectTimeout: Duration { .nanoseconds(Int64(context.options.connectTimeout * 1e9)) }

    func connectFailed(_ detail: String, now: Instant) {
        if reconnection != nil { return reconnectFailed(detail, code: nil, now: now) }
        connectFailures += 1
        lastConnectError = detail
        let deadline = (record.startedAt ?? now) + connectTimeout
        if !context.connectFailureLogged {
            context.connectFailureLogged = true
            context.log(
                "roombot: \(record.identity): \(detail); retrying until \(context.options.connectTimeout) s after start\n"
            )
        }
        let next = now + Self.backoff(afterFailures: connectFailures)
        if next < deadline {
            reconnectAt = next
        } else {
            giveUpConnecting(now: now)
        }
    }

    func giveUpConnecting(now: Instant) {
        guard !record.gaveUp else { return }
        reconnectAt = nil
        record.gaveUp = true
        let seconds = record.startedAt.map { Double((now - $0).nanoseconds) / 1e9 } ?? 0
        record.error(
            "connect",
            "\(lastConnectError ?? "no connection") (\(connectFailures) attempts in \(seconds) s)")
    }

    func reconnect(now: Instant) {
        if let post = lastPost, usesWHIP || usesWHEP {
            self.post(path: post.path, sdp: post.sdp, purpose: post.purpose)
        } else {
            openSignaling(now: now)
        }
    }

    /// The room WebSocket ended. Before it opened, a TCP-level failure is
    /// retried and an HTTP answer ends this bot; after it opened, a close
    /// we did not start is reconnected, or (drain, 1008) a
    /// `signaling_closed` error.
    func signalingClosed(_ reason: String, code: WebSocketCloseCode?, now: Instant) {
        guard !leaving else { return }
        if reconnection != nil {
            reconnectFailed(reason, code: code, now: now)
        } else if opened {
            guard !drainAnnounced, code != .policyViolation else { return record.error("signaling_closed", reason) }
            reconnection = SignalingReconnection(since: now, reason: reason)
            reconnectAt = now + Self.backoff(afterFailures: 1)
            if !context.dropLogged {
                context.dropLogged = true
                context.log(
                    "roombot: \(record.identity): \(reason); reconnecting for up to \(context.options.connectTimeout) s\n")
            }
        } else if reason.hasPrefix("connect") {
            connectFailed(reason, now: now)
        } else {
            record.error("handshake", reason)
            record.gaveUp = true
        }
    }

    /// One reconnect attempt failed (TCP, the upgrade, or the WebSocket
    /// closed again before `joined`): the next after the backoff, unless
    /// the server answered the upgrade with an HTTP status (503 while it
    /// drains: the answer will not change) or the deadline comes first.
    func reconnectFailed(_ detail: String, code: WebSocketCloseCode?, now: Instant) {
        guard var r = reconnection else { return }
        r.attempts += 1
        r.lastFailure = detail
        reconnection = r
        let next = now + Self.backoff(afterFailures: r.attempts + 1)
        if detail.hasPrefix("HTTP ") || code == .policyViolation || drainAnnounced || next >= r.since + connectTimeout {
            giveUpReconnecting(now: now, at: "the deadline")
        } else {
            reconnectAt = next
        }
    }

    /// The WebSocket is not coming back (deadline, refusal, or the run's
    /// end): the drop counts as `signaling_closed`, as without reconnects.
    func giveUpReconnecting(now: Instant, at moment: String) {
        guard let r = reconnection else { return }
        reconnection = nil
        reconnectAt = nil
        if signaling?.phase != .open { signaling = nil }
        let seconds = Double((now - r.since).nanoseconds) / 1e9
        record.error(
            "signaling_closed",
            "\(r.reason); not joined again by \(moment) (\(r.attempts) failed attempts in \(seconds) s"
                + (r.lastFailure.map { ", last: \($0)" } ?? "") + ")")
    }

    /// `joined` on a reconnected WebSocket. Resumed: the server kept the
    /// participant and its transports, so nothing is negotiated again (a
    /// reconnect). Not resumed (the room was placed on another node after
    /// its node died, the grace period had passed, or a restarted server):
    /// the server holds a new participant without our transports, and the
    /// bot starts over as one (a rejoin, `Bot+Rejoin.swift`).
    func rejoined(resumed: Bool, now: Instant) {
        let droppedAt = reconnection?.since ?? now
        reconnection = nil
        reconnectAt = nil
        let fresh = record.joinedAt != nil && !resumed
        if !context.rejoinLogged {
            context.rejoinLogged = true
            context.log(
                "roombot: \(record.identity): joined again "
                    + (fresh ? "(not resumed: starting over as a new participant)\n" : "(resumed)\n"))
        }
        guard fresh else {
            record.reconnects += 1
            return
        }
        startOver(droppedAt: droppedAt, now: now)
    }

    /// While a connection is being set up (TCP connect, the upgrade or the
    /// WHIP/WHEP exchange before 201): the instant it must be done by.
    var connectDeadline: Instant? {
        if let r = reconnection { return leaving ? nil : r.since + connectTimeout }
        guard !record.gaveUp, !opened, record.joinedAt == nil, !leaving, let started = record.startedAt else {
            return nil
        }
        let inFlight =
            (usesWHIP || usesWHEP)
            ? http != nil && httpPurpose != .delete
            : signaling.map { $0.phase == .connecting || $0.phase == .handshaking } ?? false
        return inFlight ? started + connectTimeout : nil
    }

    /// A server that takes the TCP connection and then says nothing (or a
    /// SYN that is never answered) must not hold the bot past the deadline
    /// either: the attempt is dropped and the bot gives up.
    func checkConnectDeadline(now: Instant) {
        guard let deadline = connectDeadline, now >= deadline else { return }
        if reconnection != nil {
            signaling = nil
            return giveUpReconnecting(now: now, at: "the deadline")
        }
        let waiting =
            (usesWHIP || usesWHEP) ? "HTTP answer" : signaling?.phase == .connecting ? "TCP connect" : "WebSocket upgrade"
        connectFailures += 1
        lastConnectError = "connect \(server.endpoint.address): no \(waiting) within \(context.options.connectTimeout) s"
        signaling = nil
        http = nil
        httpPurpose = .none
        giveUpConnecting(now: now)
    }
}
