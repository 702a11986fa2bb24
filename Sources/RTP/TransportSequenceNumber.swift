import Wire

/// The transport-wide sequence number header extension
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 2): a 16-bit
/// counter across all media of one transport, echoed in transport-cc
/// feedback. Extend it with `Wire.SequenceNumberUnwrapper`.
package struct TransportSequenceNumber: Equatable, Hashable, Sendable {
    package var rawValue: UInt16
    package init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// Reads the element value: exactly 2 bytes, big-endian.
    package init?(value: RawSpan) {
        guard value.byteCount == 2 else { return nil }
        rawValue = UInt16(value.byte(at: 0)) << 8 | UInt16(value.byte(at: 1))
    }
}
