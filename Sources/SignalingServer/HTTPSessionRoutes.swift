import Foundation
import NetIO
import RoomProtocol
import Rooms
import Signaling
import Wire

/// WHIP (RFC 9725) and WHEP over plain HTTP/1.1 (docs/WHIP_WHEP.md):
///
/// - `POST /whip/{room}` with an SDP offer publishes; `POST /whep/{room}`
///   plays the room's first publisher, `POST /whep/{room}/{identity}` that
///   participant. 201 with the answer, `Location: /whip|whep/{room}/{session}`
///   and an `ETag`.
/// - `DELETE` on the Location ends the session (200); `PATCH` with an
///   `application/trickle-ice-sdpfrag` body is accepted (204) and ignored:
///   we are ICE-lite, so the client's candidates reach us anyway as
///   peer-reflexive ones through its connectivity checks (RFC 8445 section
///   7.3.1.3). ICE restarts (`If-Match: *`) are not supported: 422 with a
///   reason.
/// - `OPTIONS` answers 204 with `Allow` (and `Accept-Post: application/sdp`
///   on the POST endpoints).
///
/// The Location is the capability for DELETE and PATCH: its session id is
/// 12 random characters (about 71 bits), so DELETE and PATCH need no token
/// (the token may have expired by then).
///
/// Every session created or ended is logged at `info`, every refusal at
/// `warning` with its status and reason, with the room, identity and remote
/// address; never the token, and never the session id (it is the
/// capability), only the participant id it stands for.
struct HTTPSessionRoutes: Sendable {
    let service: RoomService
    var remote: SocketAddress? = nil

    /// A WHIP/WHEP path: `/whip|whep/{room}[/{last}]`, segments decoded.
    enum Target: Equatable {
        case session(HTTPSessionKind, room: String, last: String?)
        /// Under `/whip/` or `/whep/` but not one of ours: 404.
        case malformed
    }

    /// nil when `path` is not under `/whip` or `/whep`.
    static func target(of path: String) -> Target? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard path.hasPrefix("/"), let first = segments.first, let kind = HTTPSessionKind(rawValue: String(first))
        else { return nil }
        let rest = segments.dropFirst().map { Self.percentDecoded($0) }
        guard (1...2).contains(rest.count), rest.allSatisfy({ $0 != nil && $0 != "" }) else { return .malformed }
        return .session(kind, room: rest[0] ?? "", last: rest.count == 2 ? rest[1] : nil)
    }

    /// In a cluster: what happens to a request before the routes answer it.
    enum ClusterStep: Equatable {
        /// Answered here, now, by `respond`: not a WHIP/WHEP request, one
        /// that needs no room (OPTIONS, 404, 405), or a session this node
        /// holds.
        case local
        /// Refused here, now, by a check that needs no room (draining or
        /// cluster unavailable, Content-Type, token, size).
        case answer(HTTPResponse)
        /// Waits for the room's placement: answered here if the room
        /// lives here, else by the room's node.
        case place(room: String)
    }

    /// Issue #15 (docs/CLUSTER.md, "WHIP and WHEP through any node"): a
    /// session is created on its room's node only. A POST is admitted here
    /// first (401/403 never cost a placement); a PATCH or DELETE of a
    /// session this node holds is answered here whatever the placement
    /// says, any other goes where the room lives.
    func clusterStep(for request: HTTPRequest, now: Instant) -> ClusterStep {
        if let room = ServerAPIRoute.roomToLocate(request, service: service) { return .place(room: room) }
        guard case .session(let kind, let room, let last) = Self.target(of: request.path) else { return .local }
        switch (request.method, last) {
        case ("POST", nil),
            ("POST", _?) where kind == .whep:
            if case .refused(let response) = admit(request, kind: kind, room: room, now: now) { return .answer(response) }
            return .place(room: room)
        case ("DELETE", let session?), ("PATCH", let session?):
            return service.hasSession(kind, room: room, session: session) ? .local : .place(room: room)
        default:
            return .local
        }
    }

    /// nil when `request.path` is not a WHIP/WHEP path.
    func respond(to request: HTTPRequest, now: Instant) -> HTTPResponse? {
        guard let target = Self.target(of: request.path) else { return nil }
        guard case .session(let kind, let room, let last) = target else { return Self.text(404, "not found") }
        switch (request.method, last) {
        case ("POST", nil):
            return offer(request, kind: kind, room: room, target: nil, now: now)
        case ("POST", let target?) where kind == .whep:
            return offer(request, kind: kind, room: room, target: target, now: now)
        case ("DELETE", let session?):
            guard let left = service.endSession(kind, room: room, session: session) else {
                return refused(Self.text(404, "no such \(kind.rawValue.uppercased()) session"), kind, room: room)
            }
            service.log(.info, "\(kind.rawValue.uppercased()) session ended by DELETE", left + remoteField)
            return HTTPResponse(status: 200)
        case ("PATCH", let session?):
            return trickle(request, kind: kind, room: room, session: session)
        case ("OPTIONS", nil):
            var response = HTTPResponse(status: 204, headers: HTTPHeaders([("Allow", "OPTIONS, POST")]))
            response.headers.append(name: "Accept-Post", value: "application/sdp")
            return response
        case ("OPTIONS", _?):
            var response = HTTPResponse(status: 204, headers: HTTPHeaders([("Allow", Self.sessionMethods(kind))]))
            if kind == .whep { response.headers.append(name: "Accept-Post", value: "application/sdp") }
            return response
        default:
            var response = Self.text(405, "method not allowed")
            response.headers.append(name: "Allow", value: last == nil ? "OPTIONS, POST" : Self.sessionMethods(kind))
            return response
        }
    }

    enum Admission {
        case admitted(JoinRequest)
        case refused(HTTPResponse)
    }

    /// The checks of an offer that need no room: new sessions taken,
    /// Content-Type, the token for this room and grant, the size.
    private func admit(_ request: HTTPRequest, kind: HTTPSessionKind, room: String, now: Instant) -> Admission {
        if let refusal = service.refusalOfNewSessions(now: now) { return .refused(refusal) }
        guard Self.mediaType(request.headers["Content-Type"]) == "application/sdp" else {
            var response = Self.text(415, "the offer must be Content-Type: application/sdp")
            response.headers.append(name: "Accept-Post", value: "application/sdp")
            return .refused(refused(response, kind, room: room))
        }
        guard let token = Self.bearerToken(request.headers["Authorization"]) else {
            var response = Self.text(401, "missing Authorization: Bearer <access token>")
            response.headers.append(name: "WWW-Authenticate", value: "Bearer")
            return .refused(refused(response, kind, room: room))
        }
        let join: JoinRequest
        do throws(AccessTokenError) {
            join = try service.verifySession(token: token, room: room, grant: kind == .whip ? .publish : .subscribe)
        } catch {
            var response = Self.text(error.status, error.reason)
            if error.status == 401 { response.headers.append(name: "WWW-Authenticate", value: "Bearer error=\"invalid_token\"") }
            return .refused(refused(response, kind, room: room))
        }
        // Before any decoding or parsing (RFC 9110 section 15.5.14).
        guard request.body.count <= service.limits.sdpBytes else {
            return .refused(
                refused(
                    Self.text(413, "the offer is larger than \(service.limits.sdpBytes) bytes"), kind, room: room,
                    identity: join.identity))
        }
        return .admitted(join)
    }

    private func offer(
        _ request: HTTPRequest, kind: HTTPSessionKind, room: String, target: String?, now: Instant
    )
        -> HTTPResponse
    {
        let join: JoinRequest
        switch admit(request, kind: kind, room: room, now: now) {
        case .admitted(let admitted): join = admitted
        case .refused(let response): return response
        }
        guard let sdp = String(validating: request.body, as: UTF8.self) else {
            return refused(Self.text(400, "the offer is not UTF-8"), kind, room: room, identity: join.identity)
        }
        let result =
            kind == .whip
            ? service.whipPublish(join, sdp: sdp, now: now) : service.whepPlay(join, target: target, sdp: sdp, now: now)
        switch result {
        case .success(let answer):
            service.noteSession(answer, kind: kind, join: join, remote: remote.map { "\($0)" })
            service.log(
                .info, "\(kind.rawValue.uppercased()) session created",
                [("room", join.room), ("identity", join.identity), ("participant", answer.participant.rawValue)]
                    + (target.map { [("plays", $0)] } ?? []) + remoteField)
            let location = "/\(kind.rawValue)/\(Self.percentEncoded(room))/\(answer.session)"
            var headers = HTTPHeaders([
                ("Content-Type", "application/sdp"), ("Location", location), ("ETag", answer.etag),
            ])
            for link in Self.iceServerLinks(service.iceServers?(join.identity) ?? []) {
                headers.append(name: "Link", value: link)
            }
            return HTTPResponse(status: 201, headers: headers, body: Array(answer.answer.utf8))
        case .failure(let error):
            var response = Self.text(Self.status(of: error.code), error.message)
            if error.code == .nothingPublished { response.headers.append(name: "Retry-After", value: "2") }
            if error.code == .serverFull { response.headers.append(name: "Retry-After", value: "30") }
            return refused(response, kind, room: room, identity: join.identity)
        }
    }

    private func trickle(_ request: HTTPRequest, kind: HTTPSessionKind, room: String, session: String) -> HTTPResponse {
        guard service.hasSession(kind, room: room, session: session) else {
            return refused(Self.text(404, "no such \(kind.rawValue.uppercased()) session"), kind, room: room)
        }
        guard Self.mediaType(request.headers["Content-Type"]) == "application/trickle-ice-sdpfrag" else {
            var response = Self.text(415, "PATCH takes Content-Type: application/trickle-ice-sdpfrag")
            response.headers.append(name: "Accept-Patch", value: "application/trickle-ice-sdpfrag")
            return response
        }
        if request.headers["If-Match"]?.trimmingSpaces == "*" {
            return Self.text(422, "ICE restarts are not supported: DELETE the session and POST a new offer")
        }
        // ICE-lite: the candidates arrive as peer-reflexive ones through the
        // client's checks; nothing to do with the fragment.
        return HTTPResponse(status: 204)
    }

    // MARK: Helpers

    private var remoteField: [(String, String)] { remote.map { [("remote", "\($0)")] } ?? [] }

    /// Logs a refused request (status and the reason in its body) and
    /// returns its response.
    private func refused(
        _ response: HTTPResponse, _ kind: HTTPSessionKind, room: String, identity: String? = nil
    ) -> HTTPResponse {
        let reason = String(decoding: response.body, as: UTF8.self).trimmingSpaces.trimmingCharacters(in: .newlines)
        service.log(
            .warning, "\(kind.rawValue.uppercased()) request refused",
            [("room", room)] + (identity.map { [("identity", $0)] } ?? []) + [
                ("status", "\(response.status)"), ("reason", reason),
            ] + remoteField)
        return response
    }

    static func status(of code: ErrorCode) -> Int {
        switch code {
        case .forbidden: 403
        case .identityInUse, .nothingPublished, .modeMismatch, .roomFull, .busy: 409
        case .draining, .serverFull: 503
        case .tooLarge: 413
        case .negotiationFailed, .badRequest, .tooManyTracks, .tooManySubscriptions: 400
        default: 400
        }
    }

    /// On `/whep/{room}/{x}`, `x` is an identity to play (POST) or a session
    /// (PATCH, DELETE).
    static func sessionMethods(_ kind: HTTPSessionKind) -> String {
        kind == .whep ? "OPTIONS, POST, PATCH, DELETE" : "OPTIONS, PATCH, DELETE"
    }

    /// The media type of a Content-Type value, lower-cased, parameters
    /// dropped (RFC 9110 section 8.3.1).
    static func mediaType(_ value: String?) -> String? {
        guard let value else { return nil }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return type.trimmingSpaces.lowercased()
    }

    /// `Bearer <token>` (RFC 6750 section 2.1; the scheme is
    /// case-insensitive).
    static func bearerToken(_ value: String?) -> String? {
        guard let value else { return nil }
        let parts = value.trimmingSpaces.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = String(parts[1]).trimmingSpaces
        return token.isEmpty ? nil : token
    }

    /// RFC 3986 section 2.1 percent-decoding of one path segment; nil on a
    /// bad escape or non-UTF-8 result.
    static func percentDecoded(_ segment: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = segment.utf8.makeIterator()
        while let b = bytes.next() {
            guard b == UInt8(ascii: "%") else {
                out.append(b)
                continue
            }
            guard let h = bytes.next(), let l = bytes.next(), let hi = hexValue(h), let lo = hexValue(l) else { return nil }
            out.append(hi << 4 | lo)
        }
        return String(validating: out, as: UTF8.self)
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters.
    static func percentEncoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(b)
            default: out += [UInt8(ascii: "%"), digits[Int(b >> 4)], digits[Int(b & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]),
            body: Array((body + "\n").utf8))
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

extension HTTPSessionRoutes {
    /// RFC 9725 section 4.6: one `Link` per ICE server URL, `rel="ice-server"`,
    /// with the TURN credentials as `username`, `credential` and
    /// `credential-type="password"`, as RFC 8288 section 3 quoted-strings
    /// (an identity may hold `"` or `\`: escaped).
    static func iceServerLinks(_ servers: [ICEServer]) -> [String] {
        servers.flatMap { server in
            server.urls.map { url in
                "<\(url)>; rel=\"ice-server\"; username=\"\(quoted(server.username))\"; "
                    + "credential=\"\(quoted(server.credential))\"; credential-type=\"password\""
            }
        }
    }

    private static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
