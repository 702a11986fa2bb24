import CryptoPrimitives

/// The server side of the WebSocket opening handshake (RFC 6455 section
/// 4.2): checks a client's upgrade request and builds the 101 response, or
/// says which error response to send instead.
package enum WebSocketHandshake {
    /// Appended to the client's key before hashing (section 1.3).
    package static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    package static let version = "13"

    package enum Rejection: Error, Equatable, Sendable {
        case methodNotGet
        case httpVersionTooOld
        /// No `Upgrade: websocket`: not a WebSocket request at all (426).
        case missingUpgrade
        /// `Connection` lacks the `upgrade` token.
        case missingConnectionUpgrade
        /// `Sec-WebSocket-Version` other than 13 (426 with our version).
        case unsupportedVersion
        /// `Sec-WebSocket-Key` absent, repeated, or not base64 of 16 bytes.
        case invalidKey

        package var status: Int {
            switch self {
            case .missingUpgrade, .unsupportedVersion: return 426
            default: return 400
            }
        }

        package var reason: String {
            switch self {
            case .methodNotGet: return "a WebSocket handshake must be a GET"
            case .httpVersionTooOld: return "a WebSocket handshake needs HTTP/1.1"
            case .missingUpgrade: return "expected Upgrade: websocket"
            case .missingConnectionUpgrade: return "expected Connection: upgrade"
            case .unsupportedVersion: return "only Sec-WebSocket-Version 13 is supported"
            case .invalidKey: return "Sec-WebSocket-Key must be base64 of 16 bytes"
            }
        }

        /// The response to send before closing the connection. A 426 names
        /// what to upgrade to (RFC 9110 section 15.5.22) and a version
        /// mismatch names ours (RFC 6455 section 4.4).
        package var response: HTTPResponse {
            var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Connection", "close")])
            if status == 426 {
                headers.append(name: "Upgrade", value: "websocket")
                headers.append(name: "Sec-WebSocket-Version", value: WebSocketHandshake.version)
            }
            return HTTPResponse(status: status, headers: headers, body: Array((reason + "\n").utf8))
        }
    }

    /// The `Sec-WebSocket-Accept` value for a client's key: base64 of the
    /// SHA-1 of the key (as sent) followed by the GUID (section 4.2.2).
    package static func acceptValue(forKey key: String) -> String {
        Base64.encode(Digest.sha1(Array((key + guid).utf8)), .standard)
    }

    /// The 101 Switching Protocols response to `request`, or why not.
    /// `subprotocols` are the ones the server speaks, in preference order:
    /// the first the client also offers is selected; none is selected when
    /// there is no overlap (the client then decides whether to go on).
    package static func response(to request: HTTPRequest, subprotocols: [String] = []) throws(Rejection) -> HTTPResponse {
        guard request.method == "GET" else { throw .methodNotGet }
        guard request.version == .http1_1 else { throw .httpVersionTooOld }
        guard request.headers.tokens("Upgrade").contains("websocket") else { throw .missingUpgrade }
        guard request.headers.tokens("Connection").contains("upgrade") else { throw .missingConnectionUpgrade }
        let versions = request.headers.values("Sec-WebSocket-Version")
        guard versions.count == 1, versions[0] == version else { throw .unsupportedVersion }
        let keys = request.headers.values("Sec-WebSocket-Key")
        guard keys.count == 1, let nonce = Base64.decode(keys[0], .standard), nonce.count == 16 else {
            throw .invalidKey
        }
        var headers = HTTPHeaders([
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", acceptValue(forKey: keys[0])),
        ])
        let offered = request.headers.values("Sec-WebSocket-Protocol").flatMap { value in
            value.split(separator: ",").map { HTTPSyntax.trimmed($0) }
        }
        if let chosen = subprotocols.first(where: { offered.contains($0) }) {
            headers.append(name: "Sec-WebSocket-Protocol", value: chosen)
        }
        return HTTPResponse(status: 101, headers: headers)
    }
}
