import Cluster
import Testing

/// RESP2 replies through hiredis's reader: every kind, in any pieces, and
/// the bounds that keep a bad peer from costing more than its connection.
@Suite struct RedisReplyReaderTests {
    static let stream = Array(
        "+OK\r\n-ERR wrong\r\n:-42\r\n$5\r\nhe\r\no\r\n$-1\r\n*-1\r\n*2\r\n*1\r\n:1\r\n$0\r\n\r\n".utf8)
    static let expected: [RedisValue] = [
        .status("OK"), .error("ERR wrong"), .integer(-42), .bulk(Array("he\r\no".utf8)), .null, .null,
        .array([.array([.integer(1)]), .bulk([])]),
    ]

    func readAll(_ reader: RedisReplyReader) throws -> [RedisValue] {
        var out: [RedisValue] = []
        while let v = try reader.next() { out.append(v) }
        return out
    }

    @Test func everyKindOfReplyInOneFeed() throws {
        let reader = try RedisReplyReader()
        try reader.feed(Self.stream)
        #expect(try readAll(reader) == Self.expected)
        #expect(reader.bufferedBytes == 0)
    }

    @Test func repliesSplitAtEveryByteComeOutTheSame() throws {
        let reader = try RedisReplyReader()
        var out: [RedisValue] = []
        for b in Self.stream {
            try reader.feed([b])
            out += try readAll(reader)
        }
        #expect(out == Self.expected)
    }

    @Test func anArrayLongerThanTheLimitIsRefusedBeforeItIsMade() throws {
        let reader = try RedisReplyReader(limits: .init(maxElements: 3))
        try reader.feed(Array("*4\r\n".utf8))
        #expect(throws: RedisProtocolError.tooManyElements) { try reader.next() }
        // The reader stays failed: RESP cannot resynchronise.
        #expect(throws: RedisProtocolError.tooManyElements) { try reader.feed(Array(":1\r\n".utf8)) }
        // A billion-element header costs nothing either.
        let huge = try RedisReplyReader()
        try huge.feed(Array("*1000000000\r\n".utf8))
        #expect(throws: RedisProtocolError.tooManyElements) { try huge.next() }
    }

    @Test func moreUnreadBytesThanTheLimitAreRefused() throws {
        let reader = try RedisReplyReader(limits: .init(maxBufferedBytes: 64))
        // A bulk string announcing a gigabyte waits for bytes we never take.
        try reader.feed(Array("$1000000000\r\n".utf8))
        #expect(try reader.next() == nil)
        #expect(throws: RedisProtocolError.replyTooLarge) { try reader.feed([UInt8](repeating: 0x61, count: 64)) }
    }

    @Test func bytesThatAreNotRESPAreATypedError() throws {
        let reader = try RedisReplyReader()
        try reader.feed(Array("HTTP/1.1 400 Bad Request\r\n".utf8))
        #expect {
            try reader.next()
        } throws: { error in
            if case .malformed = error as? RedisProtocolError { true } else { false }
        }
    }
}

@Suite struct RedisCommandTests {
    @Test func argumentsAreBulkStringsBinarySafe() {
        let bytes = RedisCommand.encode(["SET", "k", "a\r\nb", ""])
        #expect(bytes == Array("*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n$0\r\n\r\n".utf8))
        #expect(RedisCommand.encode([String]()) == [])
    }
}

@Suite struct RedisEndpointTests {
    @Test func urlsThatNameARedis() throws {
        #expect(try RedisEndpoint(url: "redis://127.0.0.1:6380") == .tcp(host: "127.0.0.1", port: 6380))
        #expect(try RedisEndpoint(url: "redis://cache.internal") == .tcp(host: "cache.internal", port: 6379))
        #expect(try RedisEndpoint(url: "redis://[::1]:7000/0") == .tcp(host: "::1", port: 7000))
        #expect(try RedisEndpoint(url: "unix:/run/redis/redis.sock") == .unix(path: "/run/redis/redis.sock"))
        #expect(try RedisEndpoint(url: "redis://[::1]:7000").description == "redis://[::1]:7000")
    }

    @Test func urlsThatDoNot() {
        for bad in [
            "http://x", "redis://", "redis://h:0", "redis://h:99999", "redis://u:p@h", "redis://h/3", "unix:relative",
            "unix:/" + String(repeating: "a", count: 200), "redis://[::1",
        ] {
            #expect(throws: ClusterConfigurationError.badRedisURL(bad)) { try RedisEndpoint(url: bad) }
        }
    }
}
