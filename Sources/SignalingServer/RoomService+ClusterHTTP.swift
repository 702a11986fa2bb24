import NetIO
import Rooms
import Signaling
import Wire

/// How a WHIP/WHEP request that waited for its room's placement is
/// answered (docs/CLUSTER.md, "WHIP and WHEP through any node").
enum DeferredHTTPAnswer: Equatable, Sendable {
    /// The room lives here: the routes answer it as without a cluster.
    case local
    /// The room's node's answer, relayed, or a refusal (502, 503, 504).
    case response(HTTPResponse)
}

extension RoomService {
    /// A WHIP/WHEP request waiting for its room (`HTTPSessionRoutes.clusterStep`):
    /// the room is placed on the placement queue (it talks to Redis), then
    /// the request is answered here, carried to the node that serves the
    /// new session (the room's home, or a part when the home is full) or
    /// holds the session (its id names the node), or refused with 503 and
    /// `Retry-After: 1`. The answer reaches
    /// the client's session through `ClusterLink.answer`, by `deadline`
    /// at the latest from the proxy (the session itself holds the same
    /// deadline). A request that came through another node's proxy
    /// (`X-Swiftlet-Via`) is never proxied again: one hop at most.
    func placeHTTP(_ request: HTTPRequest, room: String, key: HTTPExchangeKey, deadline: Instant, remote: SocketAddress?) {
        guard let link = cluster else { return }
        let via = request.headers[SignalingProxy.viaHeader]
        let client = remote.flatMap { Self.host(of: "\($0)") }
        let target = HTTPSessionRoutes.target(of: request.path)
        link.placement.async { [self] in
            // A session's PATCH or DELETE goes where its id says it lives;
            // a new session is placed like any participant.
            let route: ClusterRoute
            if ServerAPIRoute.isAPI(request.path) {
                // The server API goes where the room lives and never
                // places it: no home, answered here (404).
                route = link.routing.home(of: room) ?? .here(epoch: 0)
            } else if request.method == "PATCH" || request.method == "DELETE", case .session(_, _, let session?)? = target,
                let node = HTTPSessionID.node(of: session)
            {
                route = link.routing.route(sessionNode: node)
            } else {
                route = link.routing.route(room: room, identity: nil, arrivedVia: via)
            }
            var fields: [(String, String)] = [("room", room), ("method", request.method), ("conn", "\(key.connection)")]
            if let client { fields.append(("remote", client)) }
            let answer: DeferredHTTPAnswer
            switch route {
            case .here where ServerAPIRoute.isAPI(request.path):
                answer = .local
            case .here(let epoch):
                // Placed through another node at another epoch: that
                // node's view is stale (the room was placed again since).
                if let stale = ClusterEpochCheck.mismatch(
                    sent: request.headers[SignalingProxy.epochHeader], here: epoch, room: room)
                {
                    log(.warning, "HTTP request refused: the room's epoch changed", fields + [("reason", stale)])
                    link.answer(key, .response(HTTPSessionForwarding.unavailable(stale)))
                    return
                }
                // A WHEP offer here while this node serves no part of the
                // room: its answer lists the other nodes' tracks, read now.
                if request.method == "POST", case .session(.whep, _, _)? = target, !servesPart(of: room) {
                    let parts = link.routing.remoteParts(of: room)
                    if !parts.isEmpty { prepareRemoteParts(parts, of: room, now: MonotonicClock.now()) }
                }
                answer = .local
            case .elsewhere(let node, let address, let epoch):
                fields += [("node", node), ("epoch", "\(epoch)")]
                if let via {
                    let reason = "the room lives on node \(node): a request through node \(via) goes one hop only; try again"
                    log(.warning, "HTTP request refused: the room moved", fields)
                    answer = .response(HTTPSessionForwarding.unavailable(reason))
                } else if let endpoint = Self.endpoint(address) {
                    // Past the deadline the session answered 504 already.
                    guard MonotonicClock.now() < deadline else { return }
                    log(.info, "HTTP request proxied to the room's node", fields)
                    link.proxy.exchange(
                        ForwardedHTTPRequest(request, via: link.routing.nodeID, client: client, epoch: epoch > 0 ? epoch : nil),
                        for: key, to: endpoint,
                        deadline: deadline)
                    return
                } else {
                    let reason = "the room's node \(node) advertises an address that is not http://host:port: \(address)"
                    log(.warning, "HTTP request refused: cannot place the room", fields + [("reason", reason)])
                    answer = .response(HTTPSessionForwarding.unavailable(reason))
                }
            case .unavailable(let reason):
                log(.warning, "HTTP request refused: cannot place the room", fields + [("reason", reason)])
                answer = .response(HTTPSessionForwarding.unavailable(reason))
            }
            link.answer(key, answer)
        }
    }

    /// The client's request will not take an answer any more (it closed,
    /// or its deadline passed): its exchange, if any, is dropped. Through
    /// the placement queue, so that it reaches the proxy after the
    /// exchange it cancels (placements run in order).
    func cancelHTTP(_ key: HTTPExchangeKey) {
        guard let link = cluster else { return }
        link.placement.async { link.proxy.cancelExchange(key) }
    }
}
