import Wire

/// An incremental HTTP/1.1 request parser for the server side (RFC 9112).
///
/// Feed it whatever bytes arrive, in chunks of any size, then call
/// `nextRequest()` until it returns nil: each call hands out one complete
/// request, so several pipelined requests in one chunk come out one by one.
/// It never reads a socket or a clock: the shell times out a connection
/// whose `hasIncompleteRequest` stays true too long.
///
/// Framing (RFC 9112 section 6.3): a request body is exactly Content-Length
/// bytes; no Content-Length means no body. Transfer-Encoding is refused
/// (411 for chunked, 501 otherwise): WHIP and WHEP clients send
/// Content-Length, and refusing chunked keeps request smuggling out.
///
/// Limits are decided as early as possible: the header section is refused
/// as soon as more than `maxHeaderSectionBytes` bytes arrive without its
/// end, and the body as soon as Content-Length exceeds `maxBodyBytes`,
/// before any of it is buffered.
///
/// After an error the parser keeps throwing it; after a request that does
/// not keep the connection alive it returns nil for good (RFC 9112 section
/// 9.6: the server must not process later requests on that connection).
package struct HTTPRequestParser: Sendable {
    package struct Limits: Equatable, Sendable {
        /// Request line plus header fields plus the empty line, in bytes.
        package var maxHeaderSectionBytes: Int
        package var maxBodyBytes: Int
        package init(maxHeaderSectionBytes: Int = 16 * 1024, maxBodyBytes: Int = 1024 * 1024) {
            self.maxHeaderSectionBytes = maxHeaderSectionBytes
            self.maxBodyBytes = maxBodyBytes
        }
    }

    package let limits: Limits
    private var buffer: [UInt8] = []
    /// Start of the unconsumed bytes in `buffer`.
    private var start = 0
    /// Where to resume the search for the end of the header section, so
    /// byte-by-byte feeding stays linear.
    private var scanFrom = 0
    /// A parsed head waiting for its body.
    private var pending: (request: HTTPRequest, bodyLength: Int)?
    private var failure: HTTPParseError?
    private var finished = false
    /// Bytes taken out of the stream into requests so far.
    package private(set) var consumedByteCount = 0

    package init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Appends received bytes. Bytes after a connection's last request are
    /// dropped.
    package mutating func feed(_ bytes: RawSpan) {
        guard !finished, failure == nil else { return }
        buffer.reserveCapacity(buffer.count + bytes.byteCount)
        for i in 0..<bytes.byteCount { buffer.append(bytes.byte(at: i)) }
    }

    package mutating func feed(_ bytes: [UInt8]) {
        feed(bytes.span.bytes)
    }

    /// True while bytes of a request that is not complete yet are buffered:
    /// the shell's cue to run its request timeout.
    package var hasIncompleteRequest: Bool {
        failure == nil && !finished && (pending != nil || start < buffer.count)
    }

    /// Bytes received and not yet part of a returned request.
    package var bufferedByteCount: Int { buffer.count - start }

    /// Hands over the bytes received after the last returned request and
    /// stops the parser: for a connection switching protocols (a WebSocket
    /// upgrade), whose next bytes belong to the new protocol.
    package mutating func takeBufferedBytes() -> [UInt8] {
        let rest = pending == nil ? Array(buffer[start...]) : []
        buffer = []
        start = 0
        pending = nil
        finished = true
        return rest
    }

    /// True once a request without keep-alive was returned, or after an error.
    package var isFinished: Bool { finished || failure != nil }

    /// The next complete request, nil when more bytes are needed.
    package mutating func nextRequest() throws(HTTPParseError) -> HTTPRequest? {
        if let failure { throw failure }
        guard !finished else { return nil }
        do throws(HTTPParseError) {
            return try parseNext()
        } catch {
            failure = error
            buffer = []
            start = 0
            throw error
        }
    }

    private mutating func parseNext() throws(HTTPParseError) -> HTTPRequest? {
        if pending == nil {
            // RFC 9112 section 2.2: ignore empty lines before a request line.
            while start + 1 < buffer.count, buffer[start] == 0x0D, buffer[start + 1] == 0x0A {
                start += 2
                consumedByteCount += 2
                scanFrom = max(scanFrom, start)
            }
            guard let headEnd = findHeadEnd() else {
                if buffer.count - start > limits.maxHeaderSectionBytes { throw .headerSectionTooLarge }
                return nil
            }
            guard headEnd - start <= limits.maxHeaderSectionBytes else { throw .headerSectionTooLarge }
            let request = try Self.parseHead(buffer[start..<headEnd - 4])
            let length = try Self.bodyLength(of: request)
            guard length <= limits.maxBodyBytes else { throw .contentTooLarge }
            consumedByteCount += headEnd - start
            start = headEnd
            scanFrom = headEnd
            pending = (request, length)
        }
        guard let (head, length) = pending, buffer.count - start >= length else { return nil }
        var request = head
        request.body = Array(buffer[start..<start + length])
        start += length
        scanFrom = start
        consumedByteCount += length
        pending = nil
        if !request.keepAlive {
            finished = true
            buffer = []
            start = 0
        } else if start > 4096 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            scanFrom -= start
            start = 0
        }
        return request
    }

    /// The index just past the CRLF CRLF that ends the header section.
    private mutating func findHeadEnd() -> Int? {
        var i = max(scanFrom, start + 3)
        while i < buffer.count {
            if buffer[i] == 0x0A, buffer[i - 1] == 0x0D, buffer[i - 2] == 0x0A, buffer[i - 3] == 0x0D {
                return i + 1
            }
            i += 1
        }
        scanFrom = max(start, buffer.count)
        return nil
    }

    /// Request line and header fields (RFC 9112 sections 3 and 5), given
    /// the header section without its final CRLF CRLF.
    static func parseHead(_ head: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPRequest {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = head.startIndex
        var i = head.startIndex
        while i < head.endIndex {
            if head[i] == 0x0D, i + 1 < head.endIndex, head[i + 1] == 0x0A {
                lines.append(head[lineStart..<i])
                i += 2
                lineStart = i
            } else {
                i += 1
            }
        }
        lines.append(head[lineStart..<head.endIndex])

        guard let requestLine = lines.first else { throw .malformedRequestLine }
        let (method, target, version) = try parseRequestLine(requestLine)
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            let (name, value) = try parseField(line)
            headers.append(name: name, value: value)
        }
        if version == .http1_1 {
            guard headers.values("Host").count == 1 else { throw .invalidHost }
        }
        let connection = headers.tokens("Connection")
        let keepAlive =
            connection.contains("close")
            ? false : (version == .http1_1 || connection.contains("keep-alive"))
        return HTTPRequest(method: method, target: target, version: version, headers: headers, keepAlive: keepAlive)
    }

    static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (String, String, HTTPVersion) {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { throw .malformedRequestLine }
        guard parts[0].allSatisfy(HTTPSyntax.isTokenCharacter) else { throw .malformedRequestLine }
        // request-target: visible ASCII only (RFC 3986 characters; no
        // spaces, controls or raw non-ASCII).
        guard parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .malformedRequestLine }
        let v = Array(parts[2])
        // HTTP-version = "HTTP" "/" DIGIT "." DIGIT (RFC 9112 section 2.3).
        guard v.count == 8, v[0...4] == Array("HTTP/".utf8)[...], v[6] == UInt8(ascii: "."),
            let major = digit(v[5]), let minor = digit(v[7])
        else { throw .malformedRequestLine }
        guard major == 1, minor <= 1 else { throw .versionNotSupported }
        return (
            String(decoding: parts[0], as: UTF8.self), String(decoding: parts[1], as: UTF8.self),
            HTTPVersion(major: major, minor: minor)
        )
    }

    /// field-line = field-name ":" OWS field-value OWS (RFC 9112 section 5).
    static func parseField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (String, String) {
        // obs-fold (a line starting with whitespace) is refused (RFC 9112
        // section 5.2), and no whitespace may precede the colon (5.1).
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
            throw .malformedHeaderField
        }
        let name = line[line.startIndex..<colon]
        guard name.allSatisfy(HTTPSyntax.isTokenCharacter) else { throw .malformedHeaderField }
        var value = line[(colon + 1)...]
        while let f = value.first, HTTPSyntax.isWhitespace(f) { value = value.dropFirst() }
        while let l = value.last, HTTPSyntax.isWhitespace(l) { value = value.dropLast() }
        guard value.allSatisfy(HTTPSyntax.isFieldValueCharacter) else { throw .malformedHeaderField }
        return (String(decoding: name, as: UTF8.self), HTTPSyntax.latin1(value))
    }

    /// The body length from Content-Length; refuses Transfer-Encoding.
    static func bodyLength(of request: HTTPRequest) throws(HTTPParseError) -> Int {
        let lengths = request.headers.values("Content-Length")
        if request.headers.contains("Transfer-Encoding") {
            guard lengths.isEmpty else { throw .transferEncodingWithContentLength }
            throw request.headers.tokens("Transfer-Encoding").last == "chunked"
                ? .chunkedBodyNotSupported : .transferCodingNotImplemented
        }
        // Repeated fields or a list of identical values are one length
        // (RFC 9110 section 8.6); anything else is refused.
        var result: Int?
        for value in lengths {
            for element in value.split(separator: ",", omittingEmptySubsequences: false) {
                let length = try parseContentLength(HTTPSyntax.trimmed(element))
                guard result == nil || result == length else { throw .invalidContentLength }
                result = length
            }
        }
        return result ?? 0
    }

    /// 1*DIGIT; a value too large for Int saturates (and then exceeds any
    /// body limit).
    static func parseContentLength(_ text: String) throws(HTTPParseError) -> Int {
        guard !text.isEmpty else { throw .invalidContentLength }
        var value = 0
        for c in text.utf8 {
            guard let d = digit(c) else { throw .invalidContentLength }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(d)
            value = o1 || o2 ? Int.max : sum
        }
        return value
    }

    private static func digit(_ c: UInt8) -> Int? {
        c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") ? Int(c - UInt8(ascii: "0")) : nil
    }
}
