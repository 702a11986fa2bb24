import Foundation
import NetIO
import RoomProtocol
import Rooms
import Signaling

/// The server API for backends (docs/API.md): JSON over the HTTP port,
/// under `/api/v1/`, each request with `Authorization: Bearer <token>`
/// whose `admin` grant is true. A token's `room` scopes it: one room, or
/// every room when it is `*` (a name no room may take). Errors are
/// `{"code": ..., "message": ...}` with the statuses of docs/TOKENS.md.
struct ServerAPIRoute: Sendable {
    static let prefix = "/api/v1/"
    /// Request bodies at most (every field is bounded below it too).
    static let maxBodyBytes = 16 * 1024
    /// The token's `room` that reaches every room.
    static let allRooms = "*"

    let service: RoomService

    struct Failure: Error {
        var status: Int
        var code: String
        var message: String
        init(_ status: Int, _ code: String, _ message: String) {
            self.status = status
            self.code = code
            self.message = message
        }
    }

    static func isAPI(_ path: String) -> Bool { path.hasPrefix(prefix) }

    /// `response` as the API's JSON error when it is a plain-text refusal
    /// (the cluster proxy's 502, 503 and 504); anything else as it is.
    static func jsonError(from response: HTTPResponse) -> HTTPResponse {
        guard response.status >= 400, HTTPSessionRoutes.mediaType(response.headers["Content-Type"]) == "text/plain" else {
            return response
        }
        let code: String
        switch response.status {
        case 502: code = "bad_gateway"
        case 503: code = "unavailable"
        case 504: code = "gateway_timeout"
        default: code = "error"
        }
        let message = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        var json = Self.json(response.status, ErrorBody(code: code, message: message))
        if let retry = response.headers["Retry-After"] { json.headers.append(name: "Retry-After", value: retry) }
        return json
    }

    /// In a cluster (docs/API.md, "In a cluster"): the room a room-scoped
    /// call must be carried to, because this node holds no part of it;
    /// nil when it is answered here (not a room-scoped call, the room is
    /// here, or the request came through another node: one hop at most).
    static func roomToLocate(_ request: HTTPRequest, service: RoomService) -> String? {
        guard isAPI(request.path), request.headers[SignalingProxy.viaHeader] == nil else { return nil }
        let path = request.path.split(separator: "?", maxSplits: 1).first ?? ""
        let segments = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2, segments[0] == "rooms", let room = HTTPSessionRoutes.percentDecoded(segments[1]),
            !room.isEmpty, room.utf8.count <= 256, service.roomSummary(room) == nil,
            // A refused token never costs a Redis read: answered here.
            (try? ServerAPIRoute(service: service).authorize(request, room: room)) != nil
        else { return nil }
        return room
    }

    /// nil when the path is not under `/api/v1/`.
    func respond(to request: HTTPRequest) -> HTTPResponse? {
        guard request.path.hasPrefix(Self.prefix) || request.path == "/api/v1" else { return nil }
        do {
            return try route(request)
        } catch {
            if error.status != 404 || error.code != "not_found" {
                service.log(
                    .warning, "server API request refused",
                    [
                        ("method", request.method), ("path", request.path), ("status", "\(error.status)"),
                        ("reason", error.message),
                    ])
            }
            return Self.json(error.status, ErrorBody(code: error.code, message: error.message))
        }
    }

    struct ErrorBody: Encodable {
        let code: String
        let message: String
    }

    private func route(_ request: HTTPRequest) throws(Failure) -> HTTPResponse {
        let path = request.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.path
        let raw = path.dropFirst(Self.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        var segments: [String] = []
        for s in raw {
            guard let decoded = HTTPSessionRoutes.percentDecoded(s), !decoded.isEmpty, decoded.utf8.count <= 256 else {
                throw Failure(404, "not_found", "no such API path")
            }
            segments.append(decoded)
        }
        guard segments.first == "rooms" else { throw Failure(404, "not_found", "no such API path") }
        let rest = Array(segments.dropFirst())
        let method = request.method
        switch (method, rest.count) {
        case ("GET", 0):
            let scope = try authorize(request, room: nil)
            let rooms = service.roomSummaries.filter { scope == Self.allRooms || $0.name == scope }
            return Self.json(200, ["rooms": rooms.map(RoomJSON.init)])
        case ("POST", 0):
            let body: CreateRoom = try decode(request)
            _ = try authorize(request, room: body.name)
            return try createRoom(body)
        case ("GET", 1):
            _ = try authorize(request, room: rest[0])
            guard let room = service.roomSummary(rest[0]) else { throw Self.noRoom(rest[0]) }
            var json = RoomJSON(room)
            json.recording = service.recorder.map { $0.recordingRooms.contains(room.name) }
            return Self.json(200, json)
        case ("PATCH", 1):
            _ = try authorize(request, room: rest[0])
            let body: UpdateMetadata = try decode(request)
            let room = try unwrap(service.administer { d in d.updateRoomMetadata(body.metadata, of: rest[0]).map { ($0, []) } })
            return Self.json(200, RoomJSON(room))
        case ("DELETE", 1):
            _ = try authorize(request, room: rest[0])
            try unwrap(service.administer { d in d.closeRoom(rest[0]).map { ((), $0) } })
            service.log(.info, "room closed by the server API", [("room", rest[0])])
            return Self.json(200, ["closed": rest[0]])
        case ("POST", 2) where rest[1] == "data":
            _ = try authorize(request, room: rest[0])
            let body: SendData = try decode(request)
            let payload: [UInt8]
            let isText: Bool
            switch (body.data, body.base64) {
            case (let text?, nil):
                (payload, isText) = (Array(text.utf8), true)
            case (nil, let encoded?):
                guard let bytes = Data(base64Encoded: encoded) else {
                    throw Failure(400, "bad_request", "base64 is not base64")
                }
                (payload, isText) = (Array(bytes), false)
            default:
                throw Failure(400, "bad_request", "give exactly one of data (text) and base64 (binary)")
            }
            let sent = try unwrap(
                service.administer { d in
                    d.sendServerData(
                        room: rest[0], label: body.label ?? "chat", isText: isText, payload: payload,
                        to: Set(body.destinationIdentities ?? []))
                })
            return Self.json(200, ["sent": sent])
        case ("POST", 2) where rest[1] == "recording":
            _ = try authorize(request, room: rest[0])
            let recorder = try recordingControl()
            guard service.roomSummary(rest[0]) != nil else { throw Self.noRoom(rest[0]) }
            let body: StartRecording = request.body.isEmpty ? StartRecording() : try decode(request)
            guard recorder.startRecording(room: rest[0], tracks: body.tracks.map(Set.init)) else {
                throw Failure(400, "bad_request", "at most 64 track ids")
            }
            service.log(.info, "recording started by the server API", [("room", rest[0])])
            return Self.json(202, ["recording": rest[0]])
        case ("DELETE", 2) where rest[1] == "recording":
            _ = try authorize(request, room: rest[0])
            let recorder = try recordingControl()
            guard recorder.recordingRooms.contains(rest[0]) else {
                throw Failure(404, "not_recording", "room '\(rest[0])' is not being recorded")
            }
            recorder.stopRecording(room: rest[0])
            service.log(.info, "recording stopped by the server API", [("room", rest[0])])
            return Self.json(200, ["stopped": rest[0]])
        case ("GET", 2) where rest[1] == "participants":
            _ = try authorize(request, room: rest[0])
            guard let list = service.participantSummaries(of: rest[0]) else { throw Self.noRoom(rest[0]) }
            return Self.json(200, ["participants": list.map(ParticipantJSON.init)])
        case ("GET", 3) where rest[1] == "participants":
            _ = try authorize(request, room: rest[0])
            guard let list = service.participantSummaries(of: rest[0]) else { throw Self.noRoom(rest[0]) }
            guard let p = list.first(where: { $0.info.identity == rest[2] }) else { throw Self.noParticipant(rest[2], rest[0]) }
            return Self.json(200, ParticipantJSON(p))
        case ("DELETE", 3) where rest[1] == "participants":
            _ = try authorize(request, room: rest[0])
            try unwrap(service.administer { d in d.removeParticipant(rest[2], of: rest[0]).map { ((), $0) } })
            service.log(.info, "participant removed by the server API", [("room", rest[0]), ("identity", rest[2])])
            return Self.json(200, ["removed": rest[2]])
        case ("PATCH", 3) where rest[1] == "participants":
            _ = try authorize(request, room: rest[0])
            let body: UpdateMetadata = try decode(request)
            let p = try unwrap(service.administer { d in d.updateMetadata(body.metadata, of: rest[2], in: rest[0]) })
            return Self.json(200, ParticipantJSON(p))
        case ("POST", 6) where rest[1] == "participants" && rest[3] == "tracks" && rest[5] == "mute":
            _ = try authorize(request, room: rest[0])
            let body: Mute = try decode(request)
            try unwrap(
                service.administer { d in d.muteTrack(rest[4], of: rest[2], in: rest[0], muted: body.muted).map { ((), $0) } })
            service.log(
                .info, "track \(body.muted ? "muted" : "unmuted") by the server API",
                [("room", rest[0]), ("identity", rest[2]), ("track", rest[4])])
            struct Muted: Encodable {
                let trackId: String
                let muted: Bool
            }
            return Self.json(200, Muted(trackId: rest[4], muted: body.muted))
        default:
            let known: [Int: String] = [0: "GET, POST", 1: "GET, PATCH, DELETE"]
            if let allow = known[rest.count] {
                var response = Self.json(405, ErrorBody(code: "method_not_allowed", message: "\(method) is not allowed here"))
                response.headers.append(name: "Allow", value: allow)
                return response
            }
            throw Failure(404, "not_found", "no such API path")
        }
    }

    // MARK: Authorization

    /// Checks the Bearer token: valid (401), `admin` (403), and for a
    /// room-scoped call its room or `*` (403). Returns the token's room.
    func authorize(_ request: HTTPRequest, room: String?) throws(Failure) -> String {
        guard let token = HTTPSessionRoutes.bearerToken(request.headers["Authorization"]) else {
            throw Failure(401, "unauthorized", "missing Authorization: Bearer <admin access token>")
        }
        let claims: AccessTokenClaims
        do throws(AccessTokenError) {
            claims = try service.verifier.verify(token, room: nil, required: .admin, nowSeconds: RoomService.wallClockSeconds())
        } catch {
            throw Failure(error.status, error.status == 401 ? "unauthorized" : "forbidden", error.reason)
        }
        if let room, claims.room != Self.allRooms, claims.room != room {
            throw Failure(403, "forbidden", "the token is for room '\(claims.room)', not '\(room)'")
        }
        return claims.room
    }

    // MARK: Bodies

    struct CreateRoom: Decodable {
        var name: String
        var mode: RoomMode?
        var maxParticipants: Int?
        /// Seconds.
        var emptyTimeout: Double?
        var metadata: String?
    }

    struct UpdateMetadata: Decodable {
        var metadata: String
    }

    struct Mute: Decodable {
        var muted: Bool
    }

    /// `POST .../data`: text or binary, on `label` ("chat" by default),
    /// to everyone with a data channel or the identities named.
    struct SendData: Decodable {
        var data: String?
        var base64: String?
        var label: String?
        var destinationIdentities: [String]?
    }

    /// `POST .../recording`: every track without a body or `tracks`.
    struct StartRecording: Decodable {
        var tracks: [String]?
    }

    private func recordingControl() throws(Failure) -> any RecordingControl {
        guard let recorder = service.recorder else {
            throw Failure(501, "recording_unavailable", "this server runs without --record-dir: nothing can be recorded")
        }
        return recorder
    }

    private func decode<T: Decodable>(_ request: HTTPRequest) throws(Failure) -> T {
        guard request.body.count <= Self.maxBodyBytes else {
            throw Failure(413, "too_large", "the body is over \(Self.maxBodyBytes) bytes")
        }
        guard HTTPSessionRoutes.mediaType(request.headers["Content-Type"]) == "application/json" else {
            throw Failure(415, "unsupported_media_type", "the body must be Content-Type: application/json")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(request.body))
        } catch {
            throw Failure(400, "bad_request", "the body is not the JSON this call takes: \(Self.describe(error))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
        case DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty
                ? "not JSON" : "bad value at '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
        default: "not JSON"
        }
    }

    private func createRoom(_ body: CreateRoom) throws(Failure) -> HTTPResponse {
        guard !body.name.isEmpty, body.name.utf8.count <= 256, body.name != Self.allRooms,
            !body.name.hasPrefix("call/"), body.name.allSatisfy({ !$0.isNewline && $0 != "\0" })
        else { throw Failure(400, "bad_request", "name must be 1 to 256 bytes, not '*' or call/..., without control characters") }
        if service.cluster != nil {
            throw Failure(
                501, "cluster_unsupported",
                "creating rooms in a cluster is not supported yet: the first join places the room (docs/API.md)")
            // (Placing an empty room would claim a home that the node's
            // refresh releases again while it has no member.)
        }
        let timeout = body.emptyTimeout ?? Double(RoomOptions.defaultAPIEmptyTimeout.components.seconds)
        guard timeout.isFinite, timeout >= 0, timeout <= 86_400 else {
            throw Failure(400, "bad_request", "emptyTimeout must be 0 to 86400 seconds")
        }
        let options = RoomOptions(
            mode: body.mode ?? .sfu, maxParticipants: body.maxParticipants, emptyTimeout: .milliseconds(Int64(timeout * 1000)),
            metadata: body.metadata ?? "")
        let now = MonotonicClock.now()
        let room = try unwrap(service.administer { d in d.createRoom(body.name, options: options, now: now).map { ($0, []) } })
        service.log(.info, "room created by the server API", [("room", room.name), ("mode", room.options.mode.rawValue)])
        return Self.json(201, RoomJSON(room))
    }

    @discardableResult
    private func unwrap<T>(_ result: Result<T, RoomError>) throws(Failure) -> T {
        switch result {
        case .success(let value): return value
        case .failure(let error): throw Self.failure(error)
        }
    }

    static func failure(_ error: RoomError) -> Failure {
        let status: Int
        switch error.code {
        case .unknownRoom, .unknownParticipant, .unknownTrack: status = 404
        case .roomExists: status = 409
        case .draining, .serverFull, .unavailable: status = 503
        case .forbidden: status = 403
        default: status = 400
        }
        return Failure(status, error.code.rawValue, error.message)
    }

    private static func noRoom(_ room: String) -> Failure {
        Failure(404, ErrorCode.unknownRoom.rawValue, "no room '\(room)' on this server")
    }

    private static func noParticipant(_ identity: String, _ room: String) -> Failure {
        Failure(404, ErrorCode.unknownParticipant.rawValue, "no participant '\(identity)' in room '\(room)'")
    }

    // MARK: Answers

    struct RoomJSON: Encodable {
        var name: String
        var mode: String
        var maxParticipants: Int?
        var emptyTimeout: Double
        var metadata: String
        var participants: Int
        var tracks: Int
        /// Set by `withRecording`: whether the recorder records the room.
        var recording: Bool?
        init(_ r: RoomSummary) {
            name = r.name
            mode = r.options.mode.rawValue
            maxParticipants = r.options.maxParticipants
            emptyTimeout = Double(r.options.emptyTimeout.nanoseconds) / 1e9
            metadata = r.options.metadata
            participants = r.participants
            tracks = r.tracks
        }
    }

    struct ParticipantJSON: Encodable {
        var id: String
        var identity: String
        var kind: String
        var connected: Bool
        var metadata: String
        var grants: Grants
        var tracks: [TrackInfo]
        init(_ p: ParticipantSummary) {
            id = p.info.id.rawValue
            identity = p.info.identity
            kind = p.kind
            connected = p.connected
            metadata = p.info.metadata ?? ""
            grants = p.grants
            tracks = p.info.tracks
        }
    }

    static func json<T: Encodable>(_ status: Int, _ value: T) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return HTTPResponse(
            status: status, headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
            body: Array(body))
    }
}
