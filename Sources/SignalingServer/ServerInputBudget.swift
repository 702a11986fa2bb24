import NetIO

/// Bytes the signalling server holds for requests and room messages that
/// have not arrived whole, over every connection. Each connection is
/// bounded on its own (a body by `limits.sdpBytes`, a WebSocket message by
/// 1 MiB), but ten thousand connections each holding a partial message
/// would still be gigabytes; past `limit`, the connection whose bytes
/// pushed the total over is refused (HTTP 503, WebSocket close 1013) and
/// its bytes are released. Used on the TCP loop's thread only.
final class ServerInputBudget: @unchecked Sendable {
    let limit: Int
    private(set) var held = 0
    private(set) var refusals = 0

    init(limit: Int) { self.limit = max(limit, 1) }

    /// A connection now holds `now` bytes instead of `before`: false when
    /// it grew and the total is over the limit (the caller refuses it and
    /// then reports 0 held).
    func update(from before: Int, to now: Int) -> Bool {
        held += now - before
        guard now > before, held > limit else { return true }
        refusals += 1
        return false
    }
}
