/// One Redis reply (RESP2, the protocol Redis 7 speaks by default): what a
/// command answered.
package indirect enum RedisValue: Equatable, Sendable {
    /// `+OK`: a status line.
    case status(String)
    /// `-ERR ...`: the command failed; the text says why.
    case error(String)
    case integer(Int64)
    /// A bulk string, binary-safe.
    case bulk([UInt8])
    /// `$-1` or `*-1`: no value (a missing key, an empty pop).
    case null
    case array([RedisValue])

    /// The bulk or status text as UTF-8, else nil.
    package var text: String? {
        switch self {
        case .bulk(let bytes): String(validating: bytes, as: UTF8.self)
        case .status(let s): s
        default: nil
        }
    }

    package var integerValue: Int64? {
        if case .integer(let n) = self { n } else { nil }
    }

    package var elements: [RedisValue]? {
        if case .array(let a) = self { a } else { nil }
    }
}
