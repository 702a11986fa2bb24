import DTLS
import Foundation
import TLS
import Testing

extension ChromiumSuite {
    /// The room page over HTTPS and its WebSocket over WSS, as a browser
    /// beyond localhost needs them for camera and microphone: two headless
    /// Chromium tabs trust swiftlet's self-signed test certificate only by
    /// its SPKI hash (`--ignore-certificate-errors-spki-list`, the value
    /// `swiftlet serve --dev --tls` prints), join, and decode each other.
    @Suite struct ChromiumPageHTTPSTests {
        @Test(.timeLimit(.minutes(1)))
        func roomPagesJoinAndDecodeOverHTTPSWithTheSPKIFlag() throws {
            let certificate = try DTLSCertificate.generate(
                issuedAt: Int64(Date().timeIntervalSince1970), subjectAltNames: "DNS:localhost,IP:127.0.0.1")
            let context = try TLSContext.server(
                certificateChainPEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
            let swiftlet = try LoopbackSwiftlet(tls: TLSContextSlot(context))
            defer { swiftlet.stop() }
            let url = try #require(swiftlet.secureURL)
            let result = try swiftlet.runScript(
                "chromium_page_https.py", tokens: swiftlet.tokens(for: ["alice", "bob"], room: "https-room"), url: url,
                arguments: ["--spki", Data(context.leafSPKISHA256).base64EncodedString()], timeout: .seconds(55))
            #expect(result["errors"] == nil, "\(result)")
            let pages = try #require(result["pages"] as? [[String: Any]], "\(result)")
            #expect(pages.count == 2)
            for page in pages {
                #expect(page["protocol"] as? String == "https:", "\(page)")
                #expect(page["secureContext"] as? Bool == true, "\(page)")
                let tiles = try #require(page["tiles"] as? [[String: Any]], "\(page)")
                #expect(tiles.count == 1 && (tiles[0]["framesDecoded"] as? Int ?? 0) > 0, "\(page)")
            }
        }
    }
}
