import SDP

extension FuzzEntryPoints {
    /// SDP: parse; when that succeeds, serialize, re-parse, and require the
    /// same value and, from then on, the same bytes.
    public static func sdp(_ data: UnsafeRawBufferPointer) {
        guard let parsed = try? SessionDescription.parse(RawSpan(_unsafeBytes: data)) else { return }
        let first = parsed.bytes
        let again: SessionDescription
        do {
            again = try first.withUnsafeBytes { p throws(SDPParseError) in try SessionDescription.parse(RawSpan(_unsafeBytes: p)) }
        } catch {
            preconditionFailure("serialized SDP does not parse: \(error)")
        }
        precondition(again == parsed, "SDP changed across serialize and re-parse")
        precondition(again.bytes == first, "SDP serialisation is not a fixed point")
    }
}
