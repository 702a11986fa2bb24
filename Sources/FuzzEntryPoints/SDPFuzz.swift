import SDP

extension FuzzEntryPoints {
    /// SDP: parse; when that succeeds, serialize, re-parse, and require the
    /// same value and, from then on, the same bytes.
    public static func sdp(_ data: UnsafeRawBufferPointer) {
        guard let parsed = try? SessionDescription.parse(RawSpan(_unsafeBytes: data)) else { return }
        let first = parsed.bytes
        // Serialisation may grow a description a little (LF becomes CRLF,
        // `msid-semantic:` gains a space), so input just under the size
        // limits can serialize to text the parser refuses by design.
        guard withinLimits(first) else { return }
        let again: SessionDescription
        do {
            again = try first.withUnsafeBytes { p throws(SDPParseError) in try SessionDescription.parse(RawSpan(_unsafeBytes: p))
            }
        } catch {
            preconditionFailure("serialized SDP does not parse: \(error)")
        }
        precondition(again == parsed, "SDP changed across serialize and re-parse")
        precondition(again.bytes == first, "SDP serialisation is not a fixed point")
    }

    private static func withinLimits(_ bytes: [UInt8]) -> Bool {
        guard bytes.count <= SessionDescription.maxBytes else { return false }
        var lines = 0, length = 0
        for b in bytes {
            if b == 0x0A {
                lines += 1
                length = 0
            } else {
                length += 1
                if length > SessionDescription.maxLineBytes + 1 { return false }
            }
        }
        return lines <= SessionDescription.maxLines
    }
}
