import DTLS
import Foundation
import TLS
import Testing

extension ChromiumSuite {
    /// Networks where only TLS gets out: two headless Chromium tabs join a
    /// room with iceTransportPolicy "relay" and only the `turns:` server
    /// of the join response, so all their media crosses swiftlet's
    /// built-in TURN over TLS (trusting its test certificate by SPKI hash)
    /// to the SFU, and each decodes the other. getStats must show relay
    /// candidates over TLS on both connections of both tabs. Then the
    /// connectivity check page (/check) reports UDP, TCP and TLS to the
    /// TURN server as working.
    @Suite struct ChromiumTURNTests {
        @Test(.timeLimit(.minutes(1)))
        func roomPagesDecodeThroughTheBuiltInTURNOverTLSOnly() throws {
            let certificate = try DTLSCertificate.generate(
                issuedAt: Int64(Date().timeIntervalSince1970), subjectAltNames: "DNS:localhost,IP:127.0.0.1")
            let context = try TLSContext.server(
                certificateChainPEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
            // The media is announced as 127.0.0.2 while it binds 127.0.0.1,
            // as a node behind NAT announces its public address: nothing
            // listens at the announced address, so media arrives only if the
            // relay routes it to the worker's own address (`peerRoutes`).
            let swiftlet = try LoopbackSwiftlet(announcedIP: "127.0.0.2", tls: TLSContextSlot(context), turn: true)
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript(
                "chromium_page_turn.py", tokens: swiftlet.tokens(for: ["alice", "bob"], room: "turn-room"), url: swiftlet.url,
                arguments: ["--spki", Data(context.leafSPKISHA256).base64EncodedString()], timeout: .seconds(55))
            #expect(result["errors"] == nil, "\(result)")
            let pages = try #require(result["pages"] as? [[String: Any]], "\(result)")
            #expect(pages.count == 2)
            for page in pages {
                let tiles = try #require(page["tiles"] as? [[String: Any]], "\(page)")
                #expect(tiles.count == 1 && (tiles[0]["framesDecoded"] as? Int ?? 0) > 0, "\(page)")
                let pairs = try #require(page["pairs"] as? [String: [String: Any]], "\(page)")
                for connection in ["publisher", "subscriber"] {
                    #expect(pairs[connection]?["candidateType"] as? String == "relay", "\(connection): \(page)")
                    #expect(pairs[connection]?["relayProtocol"] as? String == "tls", "\(connection): \(page)")
                }
            }
            // The connectivity check page: all three ways in work here.
            let check = try #require(result["check"] as? [String: [String: Any]], "\(result)")
            for transport in ["udp", "tcp", "tls"] {
                #expect(check[transport]?["ok"] as? Bool == true, "\(transport): \(check)")
            }
            // Both tabs, two connections each, at least one allocation per
            // connection, plus the check's three. The TLS and TCP ones end
            // with their connections when Chromium exits; the check's UDP
            // one lives until its lifetime runs out (or Chromium's Refresh
            // with lifetime 0 arrived first).
            #expect((swiftlet.turn?.relaysOpened ?? 0) >= 7)
            let end = Date().addingTimeInterval(3)
            while (swiftlet.turn?.allocationCount ?? 0) > 1, Date() < end { usleep(50_000) }
            #expect((swiftlet.turn?.allocationCount ?? 9) <= 1)
        }
    }
}
