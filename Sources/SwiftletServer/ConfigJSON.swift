/// A strict JSON reader for the config file (RFC 8259) that says where
/// things are: every error and every object key carries its line and
/// column, so that "unknown key 'workerz'" and "expected ',' or '}'" point
/// at the place to fix. Foundation's parsers report a byte offset at best,
/// and JSONDecoder ignores keys it does not know, which is how a typo used
/// to run the server on defaults.
///
/// Bounded: at most `maxBytes` of input and `maxDepth` levels of nesting;
/// duplicate keys are an error (RFC 8259 section 4 leaves them undefined).
enum ConfigJSON {
    static let maxBytes = 1 << 20
    static let maxDepth = 32

    struct Position: Equatable, CustomStringConvertible {
        var line: Int
        var column: Int
        var description: String { "line \(line), column \(column)" }
    }

    struct Member {
        var key: String
        var position: Position
        var value: Value
    }

    indirect enum Value {
        case string(String)
        /// The number's text as written (so that 18000 stays an integer).
        case number(String)
        case bool(Bool)
        case null
        case object([Member])
        case array([Value])

        var typeName: String {
            switch self {
            case .string: "a string"
            case .number: "a number"
            case .bool: "true or false"
            case .null: "null"
            case .object: "an object"
            case .array: "an array"
            }
        }
    }

    struct SyntaxError: Error, Equatable, CustomStringConvertible {
        var message: String
        var position: Position
        var description: String { "\(position): \(message)" }
    }

    static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> Value {
        guard bytes.count <= maxBytes else {
            throw SyntaxError(message: "larger than \(maxBytes) bytes", position: Position(line: 1, column: 1))
        }
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.index == bytes.count else { throw reader.error("unexpected text after the JSON value") }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var lineStart = 0

        var position: Position { Position(line: line, column: index - lineStart + 1) }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        func error(_ message: String) -> SyntaxError { SyntaxError(message: message, position: position) }

        mutating func skipSpace() {
            while let c = peek, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
                index += 1
                if c == 0x0A {
                    line += 1
                    lineStart = index
                }
            }
        }

        func found() -> String {
            guard let c = peek else { return "the end of the file" }
            return c >= 0x20 && c < 0x7F ? "'\(Character(Unicode.Scalar(c)))'" : "byte \(c)"
        }

        mutating func expect(_ c: UInt8, _ what: String) throws(SyntaxError) {
            guard peek == c else { throw error("expected \(what), found \(found())") }
            index += 1
        }

        mutating func value(depth: Int) throws(SyntaxError) -> Value {
            guard depth < ConfigJSON.maxDepth else { throw error("nested deeper than \(ConfigJSON.maxDepth) levels") }
            switch peek ?? 0 {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw error("expected a value (string, number, object, array, true, false or null), found \(found())")
            }
        }

        mutating func literal(_ word: String, _ value: Value) throws(SyntaxError) -> Value {
            let w = Array(word.utf8)
            guard index + w.count <= bytes.count, Array(bytes[index..<index + w.count]) == w else {
                throw error("expected a value, found \(found())")
            }
            index += w.count
            return value
        }

        mutating func object(depth: Int) throws(SyntaxError) -> Value {
            index += 1
            var members: [Member] = []
            skipSpace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipSpace()
                let at = position
                guard peek == UInt8(ascii: "\"") else { throw error("expected a key in double quotes, found \(found())") }
                let key = try string()
                if members.contains(where: { $0.key == key }) {
                    throw SyntaxError(message: "duplicate key '\(key)'", position: at)
                }
                skipSpace()
                try expect(UInt8(ascii: ":"), "':' after the key '\(key)'")
                skipSpace()
                members.append(Member(key: key, position: at, value: try value(depth: depth + 1)))
                skipSpace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"), "',' or '}'")
                return .object(members)
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> Value {
            index += 1
            var items: [Value] = []
            skipSpace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "]"), "',' or ']'")
                return .array(items)
            }
        }

        /// RFC 8259 section 6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        mutating func number() throws(SyntaxError) -> Value {
            let start = index
            func digits(_ r: inout Reader) -> Int {
                let s = r.index
                while let c = r.peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { r.index += 1 }
                return r.index - s
            }
            if peek == UInt8(ascii: "-") { index += 1 }
            if peek == UInt8(ascii: "0") {
                index += 1
                if let c = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) {
                    throw error("a number with a leading zero")
                }
            } else if digits(&self) == 0 {
                throw error("expected a digit, found \(found())")
            }
            if peek == UInt8(ascii: ".") {
                index += 1
                guard digits(&self) > 0 else { throw error("expected a digit after '.', found \(found())") }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard digits(&self) > 0 else { throw error("expected a digit in the exponent, found \(found())") }
            }
            return .number(String(decoding: bytes[start..<index], as: UTF8.self))
        }

        /// RFC 8259 section 7, with surrogate pairs; control characters and
        /// invalid UTF-8 are errors.
        mutating func string() throws(SyntaxError) -> String {
            index += 1
            var out: [UInt8] = []
            while true {
                guard let c = peek else { throw error("unterminated string") }
                switch c {
                case UInt8(ascii: "\""):
                    index += 1
                    guard let s = String(validating: out, as: UTF8.self) else { throw error("the string is not UTF-8") }
                    return s
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let e = peek else { throw error("unterminated string") }
                    index += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                            else { throw error("a lone UTF-16 surrogate") }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw error("a lone UTF-16 surrogate") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let u = Unicode.Scalar(scalar) else { throw error("a lone UTF-16 surrogate") }
                        out += Array(String(Character(u)).utf8)
                    default: throw error("unknown escape '\\\(Character(Unicode.Scalar(e)))'")
                    }
                case 0..<0x20:
                    throw error("a control character in a string (write it as \\n, \\t or \\u00XX)")
                default:
                    out.append(c)
                    index += 1
                }
            }
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            var v: UInt32 = 0
            for _ in 0..<4 {
                guard let c = peek else { throw error("expected four hex digits after \\u") }
                let d: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
                default: throw error("expected four hex digits after \\u, found \(found())")
                }
                v = v << 4 | d
                index += 1
            }
            return v
        }
    }
}
