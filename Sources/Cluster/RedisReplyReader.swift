import CHiredis

/// Replies from a byte stream, incrementally: `feed` what the socket gave,
/// then `next()` until nil. hiredis's reader (sans-IO: bytes in, reply
/// objects out), bounded: arrays longer than `maxElements` and more than
/// `maxBufferedBytes` of unread input are refused with a typed error, so a
/// reply announcing a huge array or bulk string costs nothing before it is
/// refused. Nesting is bounded by hiredis (9 levels).
///
/// Not for the media path: each reply is converted to `RedisValue`
/// (allocating). The cluster's control plane reads a handful per second.
package final class RedisReplyReader {
    package struct Limits: Sendable {
        package var maxElements: Int
        package var maxBufferedBytes: Int
        /// Room for a few thousand node records or room homes in one reply.
        package init(maxElements: Int = 65_536, maxBufferedBytes: Int = 8 << 20) {
            self.maxElements = maxElements
            self.maxBufferedBytes = maxBufferedBytes
        }
    }

    package let limits: Limits
    private let bounds: UnsafeMutablePointer<swiftlet_redis_limits>
    private let reader: UnsafeMutablePointer<redisReader>
    private var failed: RedisProtocolError?

    package init(limits: Limits = Limits()) throws(RedisProtocolError) {
        self.limits = limits
        bounds = .allocate(capacity: 1)
        bounds.initialize(to: swiftlet_redis_limits())
        bounds.pointee.max_elements = Int32(clamping: limits.maxElements)
        guard let r = swiftlet_redis_reader_create(bounds) else {
            bounds.deallocate()
            throw .outOfMemory
        }
        reader = r
    }

    deinit {
        redisReaderFree(reader)
        bounds.deallocate()
    }

    /// Unread bytes held.
    package var bufferedBytes: Int { reader.pointee.len - reader.pointee.pos }

    /// Appends bytes received from Redis.
    package func feed(_ bytes: UnsafeRawBufferPointer) throws(RedisProtocolError) {
        if let failed { throw failed }
        guard bufferedBytes + bytes.count <= limits.maxBufferedBytes else { throw fail(.replyTooLarge) }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        guard redisReaderFeed(reader, base.assumingMemoryBound(to: CChar.self), bytes.count) == REDIS_OK else {
            throw fail(.outOfMemory)
        }
    }

    package func feed(_ bytes: [UInt8]) throws(RedisProtocolError) {
        var failure: RedisProtocolError?
        bytes.withUnsafeBytes { b in
            do throws(RedisProtocolError) { try feed(b) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// The next complete reply, or nil until more bytes arrive.
    package func next() throws(RedisProtocolError) -> RedisValue? {
        if let failed { throw failed }
        var object: UnsafeMutableRawPointer?
        guard redisReaderGetReply(reader, &object) == REDIS_OK else {
            if bounds.pointee.refused != 0 { throw fail(.tooManyElements) }
            throw fail(.malformed(Self.errorText(reader)))
        }
        guard let object else { return nil }
        defer { freeReplyObject(object) }
        return Self.value(of: object.assumingMemoryBound(to: redisReply.self))
    }

    private func fail(_ error: RedisProtocolError) -> RedisProtocolError {
        failed = error
        return error
    }

    private static func errorText(_ reader: UnsafeMutablePointer<redisReader>) -> String {
        withUnsafeBytes(of: reader.pointee.errstr) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    private static func value(of reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        let r = reply.pointee
        func bytes() -> [UInt8] {
            guard let s = r.str, r.len > 0 else { return [] }
            return Array(UnsafeRawBufferPointer(start: s, count: r.len))
        }
        switch r.type {
        case REDIS_REPLY_STRING: return .bulk(bytes())
        case REDIS_REPLY_STATUS: return .status(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_ERROR: return .error(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_INTEGER: return .integer(Int64(r.integer))
        case REDIS_REPLY_ARRAY:
            var items: [RedisValue] = []
            items.reserveCapacity(r.elements)
            for i in 0..<r.elements {
                guard let element = r.element?[i] else { items.append(.null); continue }
                items.append(value(of: element))
            }
            return .array(items)
        default: return .null
        }
    }
}
