extension Duration {
    /// A duration as people type it on a command line or in a config file:
    /// a non-negative number and an optional unit, `ms`, `s`, `m`, `h` or
    /// `d` (`500ms`, `15s`, `1.5m`, `1h`, `2d`); a bare number is seconds.
    /// nil for anything else, a value past about 100 years, or text longer
    /// than 32 bytes. One parser for swiftlet and roombot, so that every
    /// duration flag accepts the same spellings.
    package init?(parsing text: some StringProtocol) {
        guard !text.isEmpty, text.utf8.count <= 32 else { return nil }
        let units: [(suffix: String, nanoseconds: Double)] = [
            ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9), ("d", 86400e9),
        ]
        var number = Substring(text)
        var scale = 1e9
        // "ms" before "m" and "s": the longest suffix wins.
        for unit in units where number.hasSuffix(unit.suffix) {
            number = number.dropLast(unit.suffix.count)
            scale = unit.nanoseconds
            break
        }
        // Digits with at most one decimal point: no sign, exponent, "inf"
        // or "nan", which Double(_:) would accept.
        var points = 0
        for c in number.utf8 {
            if c == UInt8(ascii: ".") {
                points += 1
            } else if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) {
                return nil
            }
        }
        guard points <= 1, number != ".", !number.isEmpty, let value = Double(number) else { return nil }
        let nanoseconds = value * scale
        guard nanoseconds <= 100 * 365 * 86400e9 else { return nil }
        self = .nanoseconds(Int64(nanoseconds.rounded()))
    }

    /// Seconds as a `Double` (for display and for APIs that take seconds).
    package var inSeconds: Double { Double(nanoseconds) / 1e9 }

    /// The shortest of `1h`, `15m`, `30s`, `1.5s`, `250ms` that is exact,
    /// so that a printed value parses back to itself.
    package var compactDescription: String {
        let ns = nanoseconds
        for (suffix, unit) in [("d", Int64(86400e9)), ("h", Int64(3600e9)), ("m", Int64(60e9)), ("s", Int64(1e9))]
        where ns != 0 && ns % unit == 0 {
            return "\(ns / unit)\(suffix)"
        }
        if ns == 0 { return "0s" }
        if ns % 1_000_000 == 0 { return "\(ns / 1_000_000)ms" }
        return "\(Double(ns) / 1e9)s"
    }
}
