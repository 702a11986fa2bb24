import Foundation

/// The server's log: one line per event on standard error, each with a UTC
/// timestamp, a level, a message and the ids that matter as fields (room,
/// identity, participant, connection, session, remote address).
///
/// Two formats: `text` (`TIME LEVEL message key=value ...`, values quoted
/// when they hold spaces, quotes or control characters) and `json` (one
/// object per line: `time`, `level`, `msg`, then the fields), for log
/// shippers.
///
/// Never a token or a secret: callers pass ids, not credentials, and every
/// line is scrubbed before it is written anyway: the API secrets the
/// server was given are replaced by `<redacted>`, and so is anything shaped
/// like a JWT (three base64url parts, the first starting `eyJ`), since a
/// token is a bearer credential (RFC 6750 section 5.3).
package struct ServerLog: Sendable {
    package enum Level: Int, Comparable, Sendable, CustomStringConvertible, CaseIterable {
        case debug, info, warning, error
        package static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        package var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
        /// `debug`, `info`, `warning` (or `warn`), `error`.
        package init?(name: String) {
            if name.lowercased() == "warn" {
                self = .warning
                return
            }
            guard let level = Level.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
            self = level
        }
    }

    package enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    package let minimum: Level?
    package let format: Format
    private let secrets: [String]
    private let sink: @Sendable (String) -> Void

    /// A log writing lines at `minimum` and above to `sink` (standard
    /// error by default, through `LogWriter`'s queue and thread: a stderr
    /// nobody drains drops lines instead of stalling the caller).
    /// `secrets` are scrubbed from every line.
    package init(
        minimum: Level, format: Format = .text, secrets: [String] = [],
        sink: @escaping @Sendable (String) -> Void = { LogWriter.standardError.write($0) }
    ) {
        self.minimum = minimum
        self.format = format
        // Longest first, so that a secret containing another is scrubbed whole.
        self.secrets = secrets.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
        self.sink = sink
    }

    private init() {
        minimum = nil
        format = .text
        secrets = []
        sink = { _ in }
    }

    /// Logs nothing (tests).
    package static let off = ServerLog()

    package func enabled(_ level: Level) -> Bool {
        guard let minimum else { return false }
        return level >= minimum
    }

    package func callAsFunction(
        _ level: Level, _ message: @autoclosure () -> String, _ fields: @autoclosure () -> [(String, String)] = []
    ) {
        guard enabled(level) else { return }
        let stamp = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        sink(line(time: stamp, level: level, message: message(), fields: fields()))
    }

    /// One formatted, scrubbed line with its newline.
    func line(time: String, level: Level, message: String, fields: [(String, String)]) -> String {
        let message = scrub(message)
        let fields = fields.map { ($0.0, scrub($0.1)) }
        switch format {
        case .text:
            var out = "\(time) \(level) \(Self.textValue(message, field: false))"
            for (key, value) in fields { out += " \(key)=\(Self.textValue(value, field: true))" }
            return out + "\n"
        case .json:
            var out = "{\"time\":\(Self.jsonString(time)),\"level\":\(Self.jsonString(level.description))"
            out += ",\"msg\":\(Self.jsonString(message))"
            for (key, value) in fields { out += ",\(Self.jsonString(key)):\(Self.jsonString(value))" }
            return out + "}\n"
        }
    }

    /// The text as is when it has no quote, backslash or control
    /// character (and, for a field value, no space or `=` and is not
    /// empty); otherwise a quoted, escaped string, so that a line is always
    /// one line and its fields stay parseable.
    static func textValue(_ text: String, field: Bool) -> String {
        let plain = text.unicodeScalars.allSatisfy { c in
            c.value >= 0x20 && c.value != 0x7F && c != "\"" && c != "\\" && !(field && (c == " " || c == "="))
        }
        return plain && !(field && text.isEmpty) ? text : jsonString(text)
    }

    /// A JSON string literal (RFC 8259 section 7): quote, backslash and
    /// control characters escaped.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for c in text.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where c.value < 0x20 || c.value == 0x7F:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    /// The text with every known secret and every JWT-shaped run replaced.
    func scrub(_ text: String) -> String {
        var text = text
        for secret in secrets where text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
        }
        guard text.contains("eyJ") else { return text }
        return Self.scrubTokens(text)
    }

    /// Replaces `eyJ<b64url>.<b64url>.<b64url>` runs by `<redacted token>`.
    static func scrubTokens(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        func isBase64URL(_ c: Unicode.Scalar) -> Bool {
            c.properties.isASCIIHexDigit || ("a"..."z").contains(c) || ("A"..."Z").contains(c) || c == "-" || c == "_"
        }
        var out = String.UnicodeScalarView()
        var i = 0
        while i < scalars.count {
            let starts =
                i + 3 <= scalars.count && scalars[i] == "e" && scalars[i + 1] == "y" && scalars[i + 2] == "J"
                && (i == 0 || !isBase64URL(scalars[i - 1]))
            if starts {
                var j = i
                var dots = 0
                while j < scalars.count, isBase64URL(scalars[j]) || (scalars[j] == "." && dots < 2) {
                    if scalars[j] == "." { dots += 1 }
                    j += 1
                }
                if dots == 2 {
                    out.append(contentsOf: "<redacted token>".unicodeScalars)
                    i = j
                    continue
                }
            }
            out.append(scalars[i])
            i += 1
        }
        return String(out)
    }
}
