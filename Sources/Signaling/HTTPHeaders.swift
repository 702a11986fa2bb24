/// The header fields of an HTTP message, in the order received (RFC 9110
/// section 5).
///
/// Field names compare case-insensitively (RFC 9110 section 5.1); repeated
/// fields are all kept, in order, because some (Content-Length, Host) must
/// be checked for repetition and list-valued ones (Connection) combine.
/// Values are kept as received minus surrounding whitespace, decoded as ISO
/// 8859-1 so that obs-text bytes survive without a lossy UTF-8 decode.
package struct HTTPHeaders: Equatable, Sendable, Sequence {
    package struct Field: Equatable, Sendable {
        package var name: String
        package var value: String
        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    package private(set) var fields: [Field]

    package init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { Field(name: $0.0, value: $0.1) }
    }

    package mutating func append(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` by one with `value`.
    package mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        append(name: name, value: value)
    }

    package mutating func remove(name: String) {
        fields.removeAll { Self.namesEqual($0.name, name) }
    }

    /// The first value of the field `name`, if present.
    package subscript(name: String) -> String? {
        fields.first { Self.namesEqual($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    package func values(_ name: String) -> [String] {
        fields.filter { Self.namesEqual($0.name, name) }.map(\.value)
    }

    /// The comma-separated list elements of every `name` field, trimmed and
    /// lowercased, empty elements dropped (RFC 9110 section 5.6.1), e.g.
    /// `Connection: keep-alive, Upgrade` gives `["keep-alive", "upgrade"]`.
    package func tokens(_ name: String) -> [String] {
        values(name).flatMap { value in
            value.split(separator: ",").map { HTTPSyntax.trimmed($0).lowercased() }.filter { !$0.isEmpty }
        }
    }

    package func contains(_ name: String) -> Bool { self[name] != nil }

    package func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    static func namesEqual(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.lowercased() == b.lowercased()
    }
}

/// Character classes of RFC 9110 section 5.6.
enum HTTPSyntax {
    /// tchar: the characters of a token (method, field name).
    static func isTokenCharacter(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(c)
        }
    }

    /// field-vchar, SP and HTAB: what a field value may contain (RFC 9110
    /// section 5.5). Excludes every other control character, CR and LF.
    static func isFieldValueCharacter(_ c: UInt8) -> Bool {
        c == 0x09 || (c >= 0x20 && c != 0x7F)
    }

    static func isWhitespace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 }

    static func trimmed(_ s: Substring) -> String {
        var view = s.utf8[...]
        while let f = view.first, isWhitespace(f) { view = view.dropFirst() }
        while let l = view.last, isWhitespace(l) { view = view.dropLast() }
        return String(decoding: view, as: UTF8.self)
    }

    /// Bytes as ISO 8859-1: each byte becomes the scalar of the same value.
    static func latin1(_ bytes: ArraySlice<UInt8>) -> String {
        var s = ""
        s.unicodeScalars.reserveCapacity(bytes.count)
        for b in bytes { s.unicodeScalars.append(Unicode.Scalar(b)) }
        return s
    }
}
