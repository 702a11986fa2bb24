import Foundation
import RoomProtocol
import Rooms
import Signaling

/// `GET /ice-servers` with `Authorization: Bearer <access token>`: the
/// built-in TURN server's URLs with credentials for the token's identity,
/// `{"iceServers": [...]}` (empty without `--turn`). The connectivity
/// check page (`/check`) uses it to learn what to try; a token is needed
/// as for a join, so credentials are never handed to anyone who asks.
enum ICEServersRoute {
    static let path = "/ice-servers"

    static func respond(to request: HTTPRequest, service: RoomService) -> HTTPResponse? {
        guard request.path == path else { return nil }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPSessionRoutes.text(405, "method not allowed")
            response.headers.append(name: "Allow", value: "GET, HEAD")
            return response
        }
        guard let token = HTTPSessionRoutes.bearerToken(request.headers["Authorization"]) else {
            var response = HTTPSessionRoutes.text(401, "missing Authorization: Bearer <access token>")
            response.headers.append(name: "WWW-Authenticate", value: "Bearer")
            return response
        }
        let identity: String
        do throws(AccessTokenError) {
            identity =
                try service.verifier.verify(token, room: nil, required: nil, nowSeconds: RoomService.wallClockSeconds())
                .subject
        } catch {
            return HTTPSessionRoutes.text(error.status, error.reason)
        }
        struct Body: Encodable { let iceServers: [ICEServer] }
        let body = (try? JSONEncoder().encode(Body(iceServers: service.iceServers?(identity) ?? []))) ?? Data()
        return HTTPResponse(
            status: 200, headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
            body: Array(body))
    }
}
