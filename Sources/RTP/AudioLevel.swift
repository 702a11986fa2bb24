import Wire

/// The client-to-mixer audio level header extension (RFC 6464 section 3):
/// one byte, the V bit (voice activity, when the sender signals it) and the
/// level in -dBov, 0 (loudest) to 127 (silence).
package struct AudioLevel: Equatable, Hashable, Sendable {
    package var voiceActivity: Bool
    /// -dBov, 0...127.
    package var level: UInt8

    package init(voiceActivity: Bool, level: UInt8) {
        self.voiceActivity = voiceActivity
        self.level = level & 0x7F
    }

    /// Reads the element value: exactly 1 byte.
    package init?(value: RawSpan) {
        guard value.byteCount == 1 else { return nil }
        let b = value.byte(at: 0)
        voiceActivity = b & 0x80 != 0
        level = b & 0x7F
    }

    package var byte: UInt8 { (voiceActivity ? 0x80 : 0) | level }
}
