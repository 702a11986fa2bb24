import Cluster

extension FuzzEntryPoints {
    /// Bytes from Redis through the bounded reply reader, fed in two pieces
    /// (split where the first byte says) with small limits so the bounds are
    /// reached: every reply read stays within the element limit, the unread
    /// bytes never pass the byte limit, and once the reader fails it stays
    /// failed. Never traps.
    public static func redisReply(_ data: UnsafeRawBufferPointer) {
        guard let reader = try? RedisReplyReader(limits: .init(maxElements: 64, maxBufferedBytes: 4096)) else { return }
        let split = data.isEmpty ? 0 : Int(data[0]) % (data.count + 1)
        var failed = false
        for piece in [UnsafeRawBufferPointer(rebasing: data[0..<split]), UnsafeRawBufferPointer(rebasing: data[split...])] {
            do {
                try reader.feed(piece)
                precondition(!failed, "a failed reader took more bytes")
                precondition(reader.bufferedBytes <= 4096)
                while let value = try reader.next() { check(value, depth: 0) }
            } catch {
                failed = true
            }
        }
    }

    private static func check(_ value: RedisValue, depth: Int) {
        precondition(depth < 10, "nesting past hiredis's bound")
        if case .array(let items) = value {
            precondition(items.count <= 64)
            for item in items { check(item, depth: depth + 1) }
        }
    }
}
