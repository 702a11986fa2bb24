import Signaling
import Testing

@testable import SignalingServer

/// The request a WHIP/WHEP proxy sends to the room's node, and the answer
/// it relays back (docs/CLUSTER.md, "WHIP and WHEP through any node").
@Suite struct HTTPSessionForwardingTests {
    private func request(
        _ method: String, _ target: String, _ headers: [(String, String)], body: String = ""
    )
        throws -> HTTPRequest
    {
        var text = "\(method) \(target) HTTP/1.1\r\n" + (headers.contains { $0.0 == "Host" } ? "" : "Host: n\r\n")
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        var parser = HTTPRequestParser()
        parser.feed(Array(text.utf8))
        return try #require(try parser.nextRequest())
    }

    @Test func theForwardedRequestCarriesTheRoutesFieldsTheViaAndTheClient() throws {
        let original = try request(
            "PATCH", "/whep/caf%C3%A9/SE_abcdefghijkl?x=1",
            [
                ("Host", "entry.example:7880"), ("Connection", "keep-alive, X-Secret"), ("X-Secret", "drop me"),
                ("content-type", "application/trickle-ice-sdpfrag"), ("Authorization", "Bearer t0k"), ("If-Match", "*"),
                ("Cookie", "session=1"), ("X-Swiftlet-Via", "spoofed"), ("X-Forwarded-For", "198.51.100.9"),
            ], body: "a=mid:0\r\n")
        let forwarded = ForwardedHTTPRequest(original, via: "node-a~1", client: "203.0.113.5")
        #expect(forwarded.method == "PATCH")
        // The target as sent: the room's node decodes the same room.
        #expect(forwarded.target == "/whep/caf%C3%A9/SE_abcdefghijkl?x=1")
        #expect(
            forwarded.headers
                == HTTPHeaders([
                    ("content-type", "application/trickle-ice-sdpfrag"), ("Authorization", "Bearer t0k"), ("If-Match", "*"),
                    ("X-Swiftlet-Via", "node-a~1"), ("X-Forwarded-For", "203.0.113.5"),
                ]))
        #expect(forwarded.body == Array("a=mid:0\r\n".utf8))
        #expect(forwarded.headerPairs.count == 5)

        let anonymous = ForwardedHTTPRequest(try request("DELETE", "/whip/r/SE_x", []), via: "n~1", client: nil)
        #expect(anonymous.headers == HTTPHeaders([("X-Swiftlet-Via", "n~1")]))
        // Placed at an epoch: it travels with the request.
        let placed = ForwardedHTTPRequest(try request("POST", "/whip/r", []), via: "n~1", client: nil, epoch: 12)
        #expect(placed.headers == HTTPHeaders([("X-Swiftlet-Via", "n~1"), ("X-Swiftlet-Epoch", "12")]))
        #expect(anonymous.body.isEmpty)
    }

    @Test func theRelayedAnswerKeepsStatusReasonClientFieldsAndBody() {
        let head = HTTPResponseHead(
            status: 201, reason: "Created",
            headers: HTTPHeaders([
                ("Content-Type", "application/sdp"), ("Location", "/whip/r/SE_q8Zr2LxP0aWd"), ("ETag", "\"mK3s\""),
                ("Link", "<turn:192.0.2.1:3478>; rel=\"ice-server\""), ("Link", "<turns:t.example:443>; rel=\"ice-server\""),
                ("Content-Length", "4"), ("Connection", "close"), ("Date", "Sun, 06 Dec 2026 10:00:00 GMT"),
                ("Set-Cookie", "x=1"),
            ]))
        let relayed = HTTPSessionForwarding.relayed(head, body: Array("v=0\n".utf8))
        #expect(relayed.status == 201 && relayed.reason == "Created")
        #expect(
            relayed.headers
                == HTTPHeaders([
                    ("Content-Type", "application/sdp"), ("Location", "/whip/r/SE_q8Zr2LxP0aWd"), ("ETag", "\"mK3s\""),
                    ("Link", "<turn:192.0.2.1:3478>; rel=\"ice-server\""),
                    ("Link", "<turns:t.example:443>; rel=\"ice-server\""),
                ]))
        #expect(relayed.body == Array("v=0\n".utf8))

        let refusal = HTTPResponseHead(
            status: 409, reason: "Conflict",
            headers: HTTPHeaders([
                ("Retry-After", "2"), ("Allow", "OPTIONS, POST"), ("Accept-Post", "application/sdp"),
                ("Accept-Patch", "application/trickle-ice-sdpfrag"), ("WWW-Authenticate", "Bearer"), ("Server", "x"),
            ]))
        #expect(
            HTTPSessionForwarding.relayed(refusal, body: []).headers
                == HTTPHeaders([
                    ("Retry-After", "2"), ("Allow", "OPTIONS, POST"), ("Accept-Post", "application/sdp"),
                    ("Accept-Patch", "application/trickle-ice-sdpfrag"), ("WWW-Authenticate", "Bearer"),
                ]))
    }

    @Test func theEntryNodesOwnAnswersSayWhyAndWhenToComeBack() {
        let unavailable = HTTPSessionForwarding.unavailable("redis: down")
        #expect(unavailable.status == 503 && unavailable.headers["Retry-After"] == "1")
        #expect(unavailable.serialize().starts(with: Array("HTTP/1.1 503 Service Unavailable\r\n".utf8)))
        #expect(unavailable.body == Array("redis: down\n".utf8))
        let bad = HTTPSessionForwarding.badGateway("connect 10.0.0.2:7880: refused")
        #expect(bad.status == 502 && bad.headers["Retry-After"] == "1")
        #expect(bad.serialize().starts(with: Array("HTTP/1.1 502 Bad Gateway\r\n".utf8)))
        #expect(String(decoding: bad.body, as: UTF8.self).contains("refused"))
        let late = HTTPSessionForwarding.gatewayTimeout("took more than 10s")
        #expect(late.status == 504 && late.headers["Retry-After"] == nil)
        #expect(late.serialize().starts(with: Array("HTTP/1.1 504 Gateway Timeout\r\n".utf8)))
    }
}
