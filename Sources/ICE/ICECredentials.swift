import CryptoPrimitives

/// The short-term credentials of one side of an ICE session (RFC 8445
/// section 5.3): a username fragment and a password, exchanged in SDP as
/// `a=ice-ufrag` / `a=ice-pwd`.
///
/// Connectivity checks are authenticated with the password of the agent
/// that receives them (RFC 8445 section 7.2.2): a check sent to the peer
/// carries USERNAME `peerUfrag:ourUfrag` and a MESSAGE-INTEGRITY keyed with
/// the peer's password.
package struct ICECredentials: Hashable, Sendable, CustomStringConvertible {
    package var ufrag: String
    package var password: String { didSet { key = Array(password.utf8) } }
    /// The STUN short-term key (RFC 8489 section 9.1): the password's bytes,
    /// made once (every consent check is authenticated with it).
    package private(set) var key: [UInt8]

    package init(ufrag: String, password: String) {
        self.ufrag = ufrag
        self.password = password
        key = Array(password.utf8)
    }

    /// Length of generated ufrags. RFC 8445 section 5.3 asks for at least 4
    /// characters (24 bits of randomness); 8 gives 48 bits.
    package static let generatedUfragLength = 8
    /// Length of generated passwords. RFC 8445 section 5.3 asks for at least
    /// 22 characters (128 bits); 24 give 144 bits.
    package static let generatedPasswordLength = 24

    /// The `ice-char` alphabet (RFC 8839 section 5.4): ALPHA / DIGIT / "+" /
    /// "/". Exactly 64 characters, so one random byte's low 6 bits pick one
    /// without bias.
    package static let iceChars: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Fresh credentials from the cryptographically secure generator (RFC
    /// 8445 section 5.3: the values MUST be random so that an attacker
    /// cannot guess them and forge checks).
    package static func random() -> ICECredentials {
        ICECredentials(
            ufrag: randomICEString(length: generatedUfragLength),
            password: randomICEString(length: generatedPasswordLength))
    }

    /// `length` ice-chars from SecureRandom.
    package static func randomICEString(length: Int) -> String {
        let bytes = SecureRandom.bytes(max(0, length))
        // 64 characters: `& 63` is always a valid index, and uniform.
        let chars = bytes.map { iceChars[Int($0 & 63)] }
        return String(decoding: chars, as: UTF8.self)
    }

    /// True when both values use only ice-chars and meet the RFC 8445
    /// section 5.3 minimum lengths (ufrag 4 to 256, password 22 to 256).
    package var isValid: Bool {
        func allICEChars(_ s: String) -> Bool { s.utf8.allSatisfy { Self.iceChars.contains($0) } }
        return (4...256).contains(ufrag.utf8.count) && (22...256).contains(password.utf8.count)
            && allICEChars(ufrag) && allICEChars(password)
    }

    /// The password is a secret: never printed.
    package var description: String { "ICECredentials(ufrag: \(ufrag))" }
}
