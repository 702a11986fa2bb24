/// `a=candidate:<foundation> <component> <transport> <priority> <address>
/// <port> typ <type> [raddr <addr>] [rport <port>] *(<name> <value>)`
/// (RFC 8839 section 5.1). `raddr`, `rport` and `tcptype` get fields; every
/// other extension pair (`generation`, `ufrag`, `network-id`, ...) is kept
/// in order.
package struct Candidate: Equatable, Sendable {
    /// `host`, `srflx`, `prflx`, `relay`, or another token kept as written.
    package struct CandidateType: RawRepresentable, Hashable, Sendable {
        package var rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package static let host = CandidateType(rawValue: "host")
        package static let serverReflexive = CandidateType(rawValue: "srflx")
        package static let peerReflexive = CandidateType(rawValue: "prflx")
        package static let relayed = CandidateType(rawValue: "relay")
    }

    package struct Extension: Equatable, Sendable {
        package var name: String
        package var value: String
        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    package var foundation: String
    package var component: UInt16
    /// `UDP` or `TCP` (case-insensitive on the wire, RFC 8839 section 5.1), as written.
    package var transport: String
    package var priority: UInt32
    /// An IP address or an FQDN (mDNS `.local` names included), as written.
    package var address: String
    package var port: UInt16
    package var type: CandidateType
    package var relatedAddress: String?
    package var relatedPort: UInt16?
    /// `active`, `passive` or `so` for TCP candidates (RFC 6544 section 4.5).
    package var tcpType: String?
    package var extensions: [Extension]

    package init(
        foundation: String, component: UInt16 = 1, transport: String = "udp", priority: UInt32,
        address: String, port: UInt16, type: CandidateType = .host,
        relatedAddress: String? = nil, relatedPort: UInt16? = nil, tcpType: String? = nil,
        extensions: [Extension] = []
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.type = type
        self.relatedAddress = relatedAddress
        self.relatedPort = relatedPort
        self.tcpType = tcpType
        self.extensions = extensions
    }

    /// The value of the first extension named `name`.
    package func extensionValue(_ name: String) -> String? {
        extensions.first { $0.name == name }?.value
    }

    package var generation: UInt32? { extensionValue("generation").flatMap { decimal(Substring($0), as: UInt32.self) } }
    package var ufrag: String? { extensionValue("ufrag") }

    /// Parses the attribute value (the text after `candidate:`), as found in
    /// SDP or in a trickled candidate string with that prefix removed.
    package static func parse(attributeValue value: Substring, line: Int = 0) throws(SDPParseError) -> Candidate {
        let f = fields(value)
        guard f.count >= 8, f.count % 2 == 0, f[6] == "typ" else { throw .malformed(.candidate, line: line) }
        // foundation = 1*32 ice-char; ice-char = ALPHA / DIGIT / "+" / "/"
        guard f[0].unicodeScalars.count <= 32, f[0].unicodeScalars.allSatisfy(isICEChar),
            let component = decimal(f[1], as: UInt16.self),
            let priority = decimal(f[3], as: UInt32.self),
            let port = decimal(f[5], as: UInt16.self)
        else { throw .malformed(.candidate, line: line) }
        var c = Candidate(
            foundation: String(f[0]), component: component, transport: String(f[2]),
            priority: priority, address: String(f[4]), port: port,
            type: CandidateType(rawValue: String(f[7])))
        var i = 8
        while i + 1 < f.count {
            let name = f[i], value = f[i + 1]
            switch name {
            case "raddr": c.relatedAddress = String(value)
            case "rport":
                guard let p = decimal(value, as: UInt16.self) else { throw .malformed(.candidate, line: line) }
                c.relatedPort = p
            case "tcptype": c.tcpType = String(value)
            default: c.extensions.append(Extension(name: String(name), value: String(value)))
            }
            i += 2
        }
        return c
    }

    package var value: String {
        var s = "\(foundation) \(component) \(transport) \(priority) \(address) \(port) typ \(type.rawValue)"
        if let relatedAddress { s += " raddr \(relatedAddress)" }
        if let relatedPort { s += " rport \(relatedPort)" }
        if let tcpType { s += " tcptype \(tcpType)" }
        for e in extensions { s += " \(e.name) \(e.value)" }
        return s
    }
}

private func isICEChar(_ c: Unicode.Scalar) -> Bool {
    ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "+" || c == "/"
}
