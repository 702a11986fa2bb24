import Wire

/// Connecting, and what counts as a signalling failure.
///
/// A connection that fails before the server answers (the TCP connect:
/// refused, unreachable, timed out) is tried again with a backoff until
/// `--connect-timeout` after the bot started: a server that is still
/// coming up is reached, one that is down fails the run at that deadline
/// instead of never. The first failure of the process is printed at once,
/// with its errno text. A server that answers with an HTTP status (a wrong
/// path, a refused token) is not tried again: the answer would not change.
extension Bot {
    /// The first retry after 250 ms, doubling to at most 2 s.
    static func backoff(afterFailures n: Int) -> Duration {
        .milliseconds(min(250 << min(max(n - 1, 0), 3), 2000))
    }

    var connectTimeout: Duration { .nanoseconds(Int64(context.options.connectTimeout * 1e9)) }

    func connectFailed(_ detail: String, now: Instant) {
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
    /// retried and an HTTP answer ends this bot; after it opened, any close
    /// we did not start is a `signaling_closed` error.
    func signalingClosed(_ reason: String, now: Instant) {
        guard !leaving else { return }
        if opened {
            record.error("signaling_closed", reason)
        } else if reason.hasPrefix("connect") {
            connectFailed(reason, now: now)
        } else {
            record.error("handshake", reason)
            record.gaveUp = true
        }
    }

    /// While a connection is being set up (TCP connect, the upgrade or the
    /// WHIP/WHEP exchange before 201): the instant it must be done by.
    var connectDeadline: Instant? {
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
