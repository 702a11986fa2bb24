import DTLS
import Foundation
import ICE
import Negotiation
import SDP
import Wire

/// The real offers committed for the SDP tests, read in place, and the
/// server's side of the transport.
enum Fixture {
    static func text(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appending(path: "../SDPTests/Fixtures/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    static func description(_ name: String) throws -> SessionDescription {
        try SessionDescription.parse(text(name))
    }

    static let serverAddress = TransportAddress(ipv4: 192, 0, 2, 10, port: 40000)
    static let serverFingerprint = CertificateFingerprint(algorithm: .sha256, digest: Array(0..<32))!
    static let serverCredentials = ICECredentials(ufrag: "SfuU", password: "0123456789abcdefghijklmn")

    static let local = LocalTransportParameters(
        credentials: serverCredentials, fingerprint: serverFingerprint,
        candidates: [ICECandidate.host(serverAddress)])

    /// Removes every attribute `drop` matches, at session and media level.
    static func removing(_ drop: (Attribute) -> Bool, from d: SessionDescription) -> SessionDescription {
        var d = d
        d.attributes.removeAll(where: drop)
        for i in d.media.indices { d.media[i].attributes.removeAll(where: drop) }
        return d
    }
}
