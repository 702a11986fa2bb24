extension SessionDescription {
    /// The SDP text with CRLF line endings (RFC 8866 section 5).
    package var text: String {
        var out = ""
        out.reserveCapacity(1024 + media.count * 2048)
        func line(_ type: String, _ value: String) {
            out += type
            out += "="
            out += value
            out += "\r\n"
        }
        line("v", "0")
        line("o", origin.value)
        line("s", sessionName)
        for o in otherLines { line(String(UnicodeScalar(o.type)), o.value) }
        if let connection { line("c", connection.value) }
        for b in bandwidths { line("b", b.text) }
        for t in timing { line("t", t.value) }
        for a in attributes { line("a", a.text) }
        for m in media {
            line("m", m.mediaLine)
            for o in m.otherLines { line(String(UnicodeScalar(o.type)), o.value) }
            if let c = m.connection { line("c", c.value) }
            for b in m.bandwidths { line("b", b.text) }
            for a in m.attributes { line("a", a.text) }
        }
        return out
    }

    /// The SDP text as UTF-8 bytes.
    package var bytes: [UInt8] { Array(text.utf8) }
}
