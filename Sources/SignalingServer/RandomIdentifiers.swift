import CryptoPrimitives
import Rooms

/// Unguessable identifiers for participants, tracks and calls: 12
/// characters of [A-Za-z0-9] from the system's secure random source (about
/// 71 bits), so that knowing one participant id tells nothing about others.
package struct RandomIdentifiers: IdentifierSource {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    package init() {}

    package mutating func next(prefix: String) -> String {
        // 62 * 4 = 248: rejecting bytes >= 248 keeps the choice uniform.
        var out = Array(prefix.utf8)
        while out.count < prefix.utf8.count + 12 {
            for b in SecureRandom.bytes(16) where b < 248 && out.count < prefix.utf8.count + 12 {
                out.append(Self.alphabet[Int(b) % 62])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
