import Wire

/// Coordination of video orientation (3GPP TS 26.114 section 7.4.5), one
/// byte: camera (C), horizontal flip (F) and rotation in quarter turns
/// clockwise (R1 R0) in the low 4 bits.
package struct VideoOrientation: Equatable, Hashable, Sendable {
    package var backFacingCamera: Bool
    package var horizontalFlip: Bool
    /// Rotation in quarter turns, 0...3 (0, 90, 180, 270 degrees).
    package var quarterTurns: UInt8

    package init(backFacingCamera: Bool, horizontalFlip: Bool, quarterTurns: UInt8) {
        self.backFacingCamera = backFacingCamera
        self.horizontalFlip = horizontalFlip
        self.quarterTurns = quarterTurns & 0x03
    }

    /// Reads the element value: at least 1 byte (the two-byte form may
    /// carry more, which is ignored).
    package init?(value: RawSpan) {
        guard value.byteCount >= 1 else { return nil }
        let b = value.byte(at: 0)
        backFacingCamera = b & 0x08 != 0
        horizontalFlip = b & 0x04 != 0
        quarterTurns = b & 0x03
    }

    package var byte: UInt8 { (backFacingCamera ? 0x08 : 0) | (horizontalFlip ? 0x04 : 0) | quarterTurns }
}
