import Wire

extension SessionDescription {
    /// Parses an SDP text (RFC 8866). Lines may end in CRLF or LF alone.
    /// Never traps; all bad input gives an `SDPParseError`.
    /// `maxMediaSections` bounds the `m=` lines: the parse stops at the
    /// first one over (`tooManyMediaSections`), so an offer with thousands
    /// of sections costs no more than the allowed count (docs/SECURITY.md).
    package static func parse(_ bytes: RawSpan, maxMediaSections: Int = .max) throws(SDPParseError) -> SessionDescription {
        let lines = try splitLines(bytes)
        var parser = Parser()
        parser.maxMediaSections = maxMediaSections
        for l in lines { try parser.take(l) }
        return try parser.finish()
    }

    /// Convenience for text already held as a String.
    package static func parse(_ text: String, maxMediaSections: Int = .max) throws(SDPParseError) -> SessionDescription {
        let bytes = Array(text.utf8)
        return try parse(bytes.span.bytes, maxMediaSections: maxMediaSections)
    }

    struct Line {
        var number: Int
        var type: UInt8
        var value: Substring
    }

    /// Splits into lines, enforcing the size limits, NUL and UTF-8 rules and
    /// the `<type>=` shape. Blank lines are skipped (but counted).
    static func splitLines(_ bytes: RawSpan) throws(SDPParseError) -> [Line] {
        guard bytes.byteCount <= maxBytes else { throw .tooLarge(byteCount: bytes.byteCount) }
        var reader = ByteReader(bytes)
        var out: [Line] = []
        var current: [UInt8] = []
        var number = 1
        func finish(_ current: inout [UInt8], _ number: Int, _ out: inout [Line]) throws(SDPParseError) {
            guard number <= maxLines else { throw .tooManyLines(line: number) }
            if current.last == 0x0D { current.removeLast() }
            guard current.count <= maxLineBytes else { throw .lineTooLong(line: number) }
            defer { current.removeAll(keepingCapacity: true) }
            guard !current.isEmpty else { return }
            guard current.count >= 2, current[1] == 0x3D, current[0] < 0x80 else { throw .missingEquals(line: number) }
            guard let text = String(validating: current[2...], as: UTF8.self) else { throw .invalidUTF8(line: number) }
            out.append(Line(number: number, type: current[0], value: Substring(text)))
        }
        while !reader.isAtEnd {
            let b = try reader.uint8(or: SDPParseError.tooLarge(byteCount: bytes.byteCount))
            if b == 0x0A {
                try finish(&current, number, &out)
                number += 1
                continue
            }
            guard b != 0 else { throw .nulByte(line: number) }
            current.append(b)
            // +1 leaves room for the CR of a CRLF ending.
            guard current.count <= maxLineBytes + 1 else { throw .lineTooLong(line: number) }
        }
        if !current.isEmpty { try finish(&current, number, &out) }
        return out
    }

    /// Assembles lines into sections, in one pass.
    struct Parser {
        var sawVersion = false
        var origin: Origin?
        var sessionName: String?
        var session = MediaDescription(media: "", formats: [])
        var timing: [Timing] = []
        var media: [MediaDescription] = []
        var current: MediaDescription?
        var simulcastLine = 0
        var maxMediaSections = Int.max
        var mediaSections = 0

        mutating func take(_ l: Line) throws(SDPParseError) {
            guard sawVersion else {
                guard l.type == UInt8(ascii: "v") else { throw .missingVersion }
                guard l.value == "0" else { throw .malformed(.version, line: l.number) }
                sawVersion = true
                return
            }
            let n = l.number
            switch l.type {
            case UInt8(ascii: "v"):
                throw .unexpectedLine(line: n)
            case UInt8(ascii: "o"):
                guard origin == nil, current == nil else { throw .unexpectedLine(line: n) }
                origin = try Origin.parse(l.value, line: n)
            case UInt8(ascii: "s"):
                guard sessionName == nil, current == nil else { throw .unexpectedLine(line: n) }
                sessionName = String(l.value)
            case UInt8(ascii: "t"):
                guard current == nil else { throw .unexpectedLine(line: n) }
                timing.append(try Timing.parse(l.value, line: n))
            case UInt8(ascii: "m"):
                mediaSections += 1
                guard mediaSections <= maxMediaSections else { throw .tooManyMediaSections(line: n) }
                try closeMedia()
                current = try MediaDescription.parseMediaLine(l.value, line: n)
            case UInt8(ascii: "c"):
                try update { (s) throws(SDPParseError) in
                    guard s.connection == nil else { throw .unexpectedLine(line: n) }
                    s.connection = try ConnectionData.parse(fields(l.value)[...], .connection, line: n)
                }
            case UInt8(ascii: "b"):
                let b = try Bandwidth.parse(l.value, line: n)
                try update { (s) throws(SDPParseError) in s.bandwidths.append(b) }
            case UInt8(ascii: "a"):
                let (name, value) = splitOnce(l.value, ":")
                let a = try Attribute.parse(name: name, value: value, line: n)
                // `MediaDescription.simulcast` is the first one; report its line.
                if case .simulcast = a, current != nil, simulcastLine == 0 { simulcastLine = n }
                try update { (s) throws(SDPParseError) in s.attributes.append(a) }
            default:
                let o = OtherLine(type: l.type, value: String(l.value))
                try update { (s) throws(SDPParseError) in s.otherLines.append(o) }
            }
        }

        private mutating func update(_ body: (inout MediaDescription) throws(SDPParseError) -> Void) throws(SDPParseError) {
            if var m = current.take() {
                defer { current = m }
                try body(&m)
            } else {
                try body(&session)
            }
        }

        private mutating func closeMedia() throws(SDPParseError) {
            guard let m = current else { return }
            try m.validateSimulcast(line: simulcastLine)
            media.append(m)
            current = nil
            simulcastLine = 0
        }

        mutating func finish() throws(SDPParseError) -> SessionDescription {
            guard sawVersion else { throw .missingVersion }
            try closeMedia()
            guard let origin else { throw .missingField(.origin) }
            guard let sessionName else { throw .missingField(.sessionName) }
            return SessionDescription(
                origin: origin, sessionName: sessionName, connection: session.connection,
                bandwidths: session.bandwidths, timing: timing,
                otherLines: session.otherLines, attributes: session.attributes, media: media)
        }
    }
}
