import Signaling
import Wire

/// A WHIP/WHEP request carried from the entry node to the node that holds
/// its room, and the answer carried back (issue #15, docs/CLUSTER.md,
/// "WHIP and WHEP through any node"). Values only: the proxy's thread
/// sends what `request` builds and hands `relayed` what came back.
///
/// Only the fields the routes read travel (RFC 9110 section 7.6.1: a
/// proxy does not forward hop-by-hop fields): the exchange writes its own
/// `Host`, `Connection: close` and `Content-Length`. The answer keeps the
/// fields a WHIP/WHEP client reads; its framing is the entry node's own.
struct ForwardedHTTPRequest: Equatable, Sendable {
    var method: String
    /// The request target as the client sent it (percent-encoding kept),
    /// so that the room's node reads the same room.
    var target: String
    var headers: HTTPHeaders
    var body: [UInt8]

    /// The request fields the WHIP/WHEP routes read (lower-cased: field
    /// names compare case-insensitively, RFC 9110 section 5.1).
    static let forwardedFields: Set<String> = ["content-type", "authorization", "if-match"]

    /// What the entry node `via` sends for `request`: the routes' fields,
    /// `X-Swiftlet-Via` (one hop: the room's node never proxies it again),
    /// `X-Swiftlet-Epoch` (the room's epoch as placed; none for a request
    /// routed by its session's node) and `X-Forwarded-For` with the client's address as the entry node
    /// counts it (`client`, the host part only).
    init(_ request: HTTPRequest, via node: String, client: String?, epoch: Int64? = nil) {
        method = request.method
        target = request.target
        headers = HTTPHeaders()
        for field in request.headers where Self.forwardedFields.contains(field.name.lowercased()) {
            headers.append(name: field.name, value: field.value)
        }
        headers.append(name: SignalingProxy.viaHeader, value: node)
        if let epoch { headers.append(name: SignalingProxy.epochHeader, value: "\(epoch)") }
        if let client { headers.append(name: "X-Forwarded-For", value: client) }
        body = request.body
    }

    /// The fields as `HTTPExchange` takes them.
    var headerPairs: [(String, String)] { headers.fields.map { ($0.name, $0.value) } }
}

/// The entry node's answers for a request routed to another node.
enum HTTPSessionForwarding {
    /// The response fields relayed to the client: what WHIP and WHEP
    /// clients read (RFC 9725 sections 4.2, 4.3 and 4.6, the `Allow` and
    /// `Accept-*` of 405/415, `WWW-Authenticate` of a 401 from the room's
    /// node). Every `Link` is kept, in order.
    static let relayedFields: Set<String> = [
        "content-type", "location", "etag", "link", "retry-after", "accept-post", "accept-patch", "allow",
        "www-authenticate",
    ]

    /// The room's node's answer as the client gets it: same status, reason
    /// phrase, relayed fields and body.
    static func relayed(_ head: HTTPResponseHead, body: [UInt8]) -> HTTPResponse {
        var headers = HTTPHeaders()
        for field in head.headers where relayedFields.contains(field.name.lowercased()) {
            headers.append(name: field.name, value: field.value)
        }
        return HTTPResponse(status: head.status, reason: head.reason, headers: headers, body: body)
    }

    /// 503 with `Retry-After: 1`: the room cannot be placed now, or it
    /// lives on another node than the one a proxied request reached.
    static func unavailable(_ reason: String) -> HTTPResponse {
        text(503, reason, retryAfter: true)
    }

    /// 502: the room's node could not be reached, or its answer was not
    /// HTTP (RFC 9110 section 15.6.3). The client may try again: the room
    /// is placed anew once a dead node's record expires.
    static func badGateway(_ reason: String) -> HTTPResponse {
        text(502, "the room's node did not answer: \(reason)", retryAfter: true)
    }

    /// 504: no answer by the request's deadline, from the placement or
    /// from the room's node (RFC 9110 section 15.6.5). The request may
    /// still take effect there (a WHIP session nobody connects to ends at
    /// its ICE timeout); the connection goes on with the next request.
    static func gatewayTimeout(_ detail: String) -> HTTPResponse {
        text(504, "no answer in time: \(detail)", retryAfter: false)
    }

    private static func text(_ status: Int, _ body: String, retryAfter: Bool) -> HTTPResponse {
        var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")])
        if retryAfter { headers.append(name: "Retry-After", value: "1") }
        return HTTPResponse(status: status, headers: headers, body: Array((body + "\n").utf8))
    }
}
