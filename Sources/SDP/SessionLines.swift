// The non-attribute lines of RFC 8866 section 5. Each type parses the text
// after `<type>=` and gives it back as `value`.

/// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>`
/// (RFC 8866 section 5.2). Session id and version are numbers that fit in
/// 64 bits (RFC 8829 section 5.2.1 makes the id at most 63 bits).
package struct Origin: Equatable, Sendable {
    package var username: String
    package var sessionID: UInt64
    package var sessionVersion: UInt64
    package var networkType: String
    package var addressType: String
    package var address: String

    package init(
        username: String = "-", sessionID: UInt64, sessionVersion: UInt64,
        networkType: String = "IN", addressType: String = "IP4", address: String = "127.0.0.1"
    ) {
        self.username = username
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    static func parse(_ value: Substring, line: Int) throws(SDPParseError) -> Origin {
        let f = fields(value)
        guard f.count == 6, let id = decimal(f[1], as: UInt64.self),
            let version = decimal(f[2], as: UInt64.self)
        else { throw .malformed(.origin, line: line) }
        return Origin(
            username: String(f[0]), sessionID: id, sessionVersion: version,
            networkType: String(f[3]), addressType: String(f[4]), address: String(f[5]))
    }

    package var value: String {
        "\(username) \(sessionID) \(sessionVersion) \(networkType) \(addressType) \(address)"
    }
}

/// `c=<nettype> <addrtype> <connection-address>` (RFC 8866 section 5.7);
/// also the optional address part of `a=rtcp` (RFC 3605).
package struct ConnectionData: Equatable, Sendable {
    package var networkType: String
    package var addressType: String
    package var address: String

    package init(networkType: String = "IN", addressType: String = "IP4", address: String) {
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    static func parse(_ f: ArraySlice<Substring>, _ field: SDPField, line: Int) throws(SDPParseError) -> ConnectionData {
        guard f.count == 3 else { throw .malformed(field, line: line) }
        let s = f.startIndex
        return ConnectionData(networkType: String(f[s]), addressType: String(f[s + 1]), address: String(f[s + 2]))
    }

    package var value: String { "\(networkType) \(addressType) \(address)" }
}

/// `t=<start-time> <stop-time>` (RFC 8866 section 5.9); WebRTC always writes `t=0 0`.
package struct Timing: Equatable, Sendable {
    package var start: UInt64
    package var stop: UInt64

    package init(start: UInt64 = 0, stop: UInt64 = 0) {
        self.start = start
        self.stop = stop
    }

    static func parse(_ value: Substring, line: Int) throws(SDPParseError) -> Timing {
        let f = fields(value)
        guard f.count == 2, let start = decimal(f[0], as: UInt64.self), let stop = decimal(f[1], as: UInt64.self)
        else { throw .malformed(.timing, line: line) }
        return Timing(start: start, stop: stop)
    }

    package var value: String { "\(start) \(stop)" }
}

/// `b=<bwtype>:<bandwidth>` (RFC 8866 section 5.8), e.g. `AS` in kbit/s or
/// `TIAS` in bit/s (RFC 3890).
package struct Bandwidth: Equatable, Sendable {
    package var type: String
    package var value: UInt64

    package init(type: String, value: UInt64) {
        self.type = type
        self.value = value
    }

    static func parse(_ text: Substring, line: Int) throws(SDPParseError) -> Bandwidth {
        let (type, rest) = splitOnce(text, ":")
        guard !type.isEmpty, !hasSpace(type), let rest, let v = decimal(rest, as: UInt64.self)
        else { throw .malformed(.bandwidth, line: line) }
        return Bandwidth(type: String(type), value: v)
    }

    package var text: String { "\(type):\(value)" }
}

/// A line this package does not interpret (`i=`, `u=`, `e=`, `p=`, `r=`,
/// `z=`, `k=` or an unknown type), kept so that re-serialisation loses
/// nothing. Written after the section's fixed lines, before its attributes.
package struct OtherLine: Equatable, Sendable {
    /// The single ASCII type character.
    package var type: UInt8
    package var value: String

    package init(type: UInt8, value: String) {
        self.type = type
        self.value = value
    }
}
