// The non-attribute lines of RFC 8866 section 5. Each type parses the text
// after `<type>=` and gives it back as `value`.

/// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>`
/// (RFC 8866 section 5.2). Session id and version are numbers that fit in
/// 64 bits (RFC 8829 section 5.2.1 makes the id at most 63 bits).
public struct Origin: Equatable, Sendable {
    public var username: String
    public var sessionID: UInt64
    public var sessionVersion: UInt64
    public var networkType: String
    public var addressType: String
    public var address: String

    public init(
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

    public var value: String {
        "\(username) \(sessionID) \(sessionVersion) \(networkType) \(addressType) \(address)"
    }
}

/// `c=<nettype> <addrtype> <connection-address>` (RFC 8866 section 5.7);
/// also the optional address part of `a=rtcp` (RFC 3605).
public struct ConnectionData: Equatable, Sendable {
    public var networkType: String
    public var addressType: String
    public var address: String

    public init(networkType: String = "IN", addressType: String = "IP4", address: String) {
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    static func parse(_ f: ArraySlice<Substring>, _ field: SDPField, line: Int) throws(SDPParseError) -> ConnectionData {
        guard f.count == 3 else { throw .malformed(field, line: line) }
        let s = f.startIndex
        return ConnectionData(networkType: String(f[s]), addressType: String(f[s + 1]), address: String(f[s + 2]))
    }

    public var value: String { "\(networkType) \(addressType) \(address)" }
}

/// `t=<start-time> <stop-time>` (RFC 8866 section 5.9); WebRTC always writes `t=0 0`.
public struct Timing: Equatable, Sendable {
    public var start: UInt64
    public var stop: UInt64

    public init(start: UInt64 = 0, stop: UInt64 = 0) {
        self.start = start
        self.stop = stop
    }

    static func parse(_ value: Substring, line: Int) throws(SDPParseError) -> Timing {
        let f = fields(value)
        guard f.count == 2, let start = decimal(f[0], as: UInt64.self), let stop = decimal(f[1], as: UInt64.self)
        else { throw .malformed(.timing, line: line) }
        return Timing(start: start, stop: stop)
    }

    public var value: String { "\(start) \(stop)" }
}

/// `b=<bwtype>:<bandwidth>` (RFC 8866 section 5.8), e.g. `AS` in kbit/s or
/// `TIAS` in bit/s (RFC 3890).
public struct Bandwidth: Equatable, Sendable {
    public var type: String
    public var value: UInt64

    public init(type: String, value: UInt64) {
        self.type = type
        self.value = value
    }

    static func parse(_ text: Substring, line: Int) throws(SDPParseError) -> Bandwidth {
        let (type, rest) = splitOnce(text, ":")
        guard !type.isEmpty, !hasSpace(type), let rest, let v = decimal(rest, as: UInt64.self)
        else { throw .malformed(.bandwidth, line: line) }
        return Bandwidth(type: String(type), value: v)
    }

    public var text: String { "\(type):\(value)" }
}

/// A line this package does not interpret (`i=`, `u=`, `e=`, `p=`, `r=`,
/// `z=`, `k=` or an unknown type), kept so that re-serialisation loses
/// nothing. Written after the section's fixed lines, before its attributes.
public struct OtherLine: Equatable, Sendable {
    /// The single ASCII type character.
    public var type: UInt8
    public var value: String

    public init(type: UInt8, value: String) {
        self.type = type
        self.value = value
    }
}
