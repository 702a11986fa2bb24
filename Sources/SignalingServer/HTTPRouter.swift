import NetIO
import Signaling
import Wire

/// The plain HTTP endpoints: health, readiness, metrics, the browser
/// client's files and `/client-config`, and in dev mode `/dev/token`. `/rtc` (the WebSocket) is
/// handled by `HTTPSession` before it gets here.
struct HTTPRouter: Sendable {
    let service: RoomService
    /// Extra Prometheus lines from the media workers (may be empty).
    let mediaMetrics: @Sendable () -> String
    var web = WebClientFiles.standard
    var devTokens: DevTokenIssuer? = nil
    /// Host and Origin rules (`HostCheck`), read per request.
    var hostCheck = HostCheckSlot()

    /// The 421/403 for a request from a name or origin this server does
    /// not serve; checked before any route, the WebSocket upgrade included.
    func hostRefusal(_ request: HTTPRequest) -> HTTPResponse? {
        hostCheck.value.withLock { $0 }.refusal(for: request)
    }

    /// A HEAD request gets the GET response; `HTTPSession` writes its
    /// header fields, the GET length included, without the body (RFC 9110
    /// section 9.3.2).
    func respond(to request: HTTPRequest, remote: SocketAddress? = nil, now: Instant) -> HTTPResponse {
        route(request, remote: remote, now: now)
    }

    private func route(_ request: HTTPRequest, remote: SocketAddress?, now: Instant) -> HTTPResponse {
        if let response = HTTPSessionRoutes(service: service, remote: remote).respond(to: request, now: now) {
            return response
        }
        if let response = ServerAPIRoute(service: service).respond(to: request) { return response }
        if let response = web.respond(to: request) { return response }
        if let response = devTokens?.respond(to: request) { return response }
        if let response = ICEServersRoute.respond(to: request, service: service) { return response }
        if let response = DevTokenIssuer.clientConfig(for: request, devTokens: devTokens != nil) { return response }
        switch (request.method, request.path) {
        case ("GET", "/healthz"), ("HEAD", "/healthz"):
            return text(200, "ok\n")
        case ("GET", "/readyz"), ("HEAD", "/readyz"):
            if let seconds = service.retryAfterSeconds(now: now) {
                return text(503, "draining: sessions close in \(seconds) s\n")
            }
            // In a cluster, a node that cannot reach Redis cannot place a
            // room: not ready for new sessions (live ones go on).
            if let reason = service.cluster?.routing.unavailableReason {
                return text(503, "cluster unavailable: \(reason)\n")
            }
            return text(200, "ready\n")
        case ("GET", "/metrics"), ("HEAD", "/metrics"):
            var response = text(200, metrics())
            response.headers.replaceOrAdd(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
            return response
        case (_, "/healthz"), (_, "/readyz"), (_, "/metrics"), (_, "/rtc"):
            var response = text(405, "method not allowed\n")
            response.headers.append(name: "Allow", value: "GET")
            return response
        default:
            return text(404, "not found\n")
        }
    }

    private func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]), body: Array(body.utf8))
    }

    /// Prometheus text format 0.0.4, base units, `swiftlet_` prefix.
    func metrics() -> String {
        let s = service.snapshot
        var out = """
            # HELP swiftlet_rooms Rooms that exist now.
            # TYPE swiftlet_rooms gauge
            swiftlet_rooms \(s.rooms)
            # HELP swiftlet_participants Participants this node serves now, connected or within their grace period.
            # TYPE swiftlet_participants gauge
            swiftlet_participants \(s.participants)
            # HELP swiftlet_signaling_connections Open room WebSocket connections.
            # TYPE swiftlet_signaling_connections gauge
            swiftlet_signaling_connections \(s.webSockets)
            # HELP swiftlet_draining 1 from SIGTERM until the process exits (no new joins), else 0.
            # TYPE swiftlet_draining gauge
            swiftlet_draining \(service.isDraining ? 1 : 0)
            # HELP swiftlet_join_failures_total Joins refused, by reason.
            # TYPE swiftlet_join_failures_total counter

            """
        for (reason, count) in s.joinFailures.sorted(by: { $0.key < $1.key }) {
            out += "swiftlet_join_failures_total{reason=\"\(reason)\"} \(count)\n"
        }
        let webhooks = service.webhookBox.withLock { $0 }?.counts ?? .init()
        out += """
            # HELP swiftlet_webhooks_sent_total Webhook events a receiver accepted (2xx).
            # TYPE swiftlet_webhooks_sent_total counter
            swiftlet_webhooks_sent_total \(webhooks.sent)
            # HELP swiftlet_webhooks_failed_total Webhook delivery attempts that failed (no answer in time, refused, non-2xx).
            # TYPE swiftlet_webhooks_failed_total counter
            swiftlet_webhooks_failed_total \(webhooks.failed)
            # HELP swiftlet_webhooks_dropped_total Webhook events given up after their retry time, or refused by a full queue.
            # TYPE swiftlet_webhooks_dropped_total counter
            swiftlet_webhooks_dropped_total \(webhooks.dropped)

            """
        out += mediaMetrics()
        return out
    }
}

extension RoomService {
    /// What a new join (the `/rtc` upgrade, a WHIP/WHEP offer) gets while
    /// the server drains: 503 with `Retry-After` (RFC 9110 section 15.6.4),
    /// so that a client or load balancer goes elsewhere. Nil when not
    /// draining.
    /// Draining, or (in a cluster) Redis unreachable: 503 with a reason
    /// and `Retry-After` for a new join. Nil when joins are taken.
    func refusalOfNewSessions(now: Instant) -> HTTPResponse? {
        if let refusal = refusalWhileDraining(now: now) { return refusal }
        guard let reason = cluster?.routing.unavailableReason else { return nil }
        return HTTPResponse(
            status: 503,
            headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Retry-After", "1")]),
            body: Array("cluster unavailable: \(reason)\n".utf8))
    }

    func refusalWhileDraining(now: Instant) -> HTTPResponse? {
        guard let seconds = retryAfterSeconds(now: now) else { return nil }
        return HTTPResponse(
            status: 503,
            headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Retry-After", String(seconds))]),
            body: Array("draining: this server is shutting down and takes no new sessions\n".utf8))
    }
}
