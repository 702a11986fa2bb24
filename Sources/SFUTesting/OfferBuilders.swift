/// SDP offers of a chosen size for limit tests (docs/SECURITY.md): a real
/// offer whose first m-section is repeated, each copy with its own mid,
/// msid and SSRC, all in the BUNDLE group. Text only, so any target's tests
/// can use it.
package enum OfferBuilders {
    /// `offer` (CRLF or LF lines, with `a=group:BUNDLE` and at least one
    /// m-section) with its m-sections replaced by `count` copies of the
    /// first, mids `0`...`count-1`.
    package static func repeatingFirstSection(of offer: String, count: Int) -> String {
        let lines = offer.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.map(String.init)
        guard let first = lines.firstIndex(where: { $0.hasPrefix("m=") }) else { return offer }
        let end = lines[(first + 1)...].firstIndex { $0.hasPrefix("m=") } ?? lines.endIndex
        let session = lines[..<first].map {
            $0.hasPrefix("a=group:BUNDLE") ? "a=group:BUNDLE " + (0..<count).map(String.init).joined(separator: " ") : $0
        }
        let section = lines[first..<end].filter { !$0.isEmpty }
        var out = session.filter { !$0.isEmpty }
        for i in 0..<count {
            for line in section {
                if line.hasPrefix("a=mid:") {
                    out.append("a=mid:\(i)")
                } else if line.hasPrefix("a=msid:") {
                    out.append("a=msid:stream track-\(i)")
                } else if line.hasPrefix("a=ssrc:") {
                    let rest = line.drop { $0 != " " }
                    out.append("a=ssrc:\(100_000 + i)\(rest)")
                } else if line.hasPrefix("a=ssrc-group:") {
                    continue
                } else {
                    out.append(line)
                }
            }
        }
        return out.joined(separator: "\r\n") + "\r\n"
    }
}
