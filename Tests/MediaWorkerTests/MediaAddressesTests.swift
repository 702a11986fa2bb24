import ICE
import MediaWorker
import NetIO
import Testing
import Wire

/// The choice of announced addresses, from a made-up interface list: no
/// sockets.
@Suite struct MediaAddressesTests {
    static func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> TransportAddress {
        TransportAddress(ipv4: a, b, c, d, port: 0)
    }
    static func v6(_ text: String) -> TransportAddress { SocketAddress(ip: text, port: 0)!.transportAddress }
    static let any6 = v6("::")
    static let any4 = v4(0, 0, 0, 0)

    /// A typical server: loopback, two private addresses, a ULA, the IPv6
    /// link-local of each interface, a down interface, a 169.254 address.
    static let machine: [InterfaceAddress] = [
        InterfaceAddress(name: "lo", address: v4(127, 0, 0, 1)),
        InterfaceAddress(name: "eth0", address: v4(10, 77, 1, 1)),
        InterfaceAddress(name: "eth1", address: v4(10, 77, 2, 1)),
        InterfaceAddress(name: "eth2", address: v4(192, 0, 2, 9), isUp: false),
        InterfaceAddress(name: "eth3", address: v4(169, 254, 3, 4)),
        InterfaceAddress(name: "lo", address: v6("::1")),
        InterfaceAddress(name: "eth0", address: v6("fd00:77::1")),
        InterfaceAddress(name: "eth0", address: v6("fe80::1")),
        InterfaceAddress(name: "eth1", address: v6("fe80::2")),
    ]

    @Test func dualStackWildcardAnnouncesEveryUsableAddressOfBothFamilies() throws {
        let chosen = try MediaAddresses.choose(bind: Self.any6, dualStack: true, announce: nil, interfaces: Self.machine)
        #expect(chosen.addresses == [Self.v4(10, 77, 1, 1), Self.v4(10, 77, 2, 1), Self.v6("fd00:77::1")])
        #expect(chosen.warnings.isEmpty)
    }

    @Test func ipv4WildcardAnnouncesIPv4Only() throws {
        let chosen = try MediaAddresses.choose(bind: Self.any4, dualStack: false, announce: nil, interfaces: Self.machine)
        #expect(chosen.addresses == [Self.v4(10, 77, 1, 1), Self.v4(10, 77, 2, 1)])
    }

    @Test func ipv4LinkLocalAddressesOnlyWhenAskedIPv6Never() throws {
        let chosen = try MediaAddresses.choose(
            bind: Self.any6, dualStack: true, announce: nil, interfaces: Self.machine, includeLinkLocal: true)
        #expect(chosen.addresses.contains(Self.v4(169, 254, 3, 4)))
        // fe80:: needs a zone no candidate can carry.
        #expect(!chosen.addresses.contains(Self.v6("fe80::1")))
        #expect(!chosen.addresses.contains(Self.v4(127, 0, 0, 1)))
        #expect(!chosen.addresses.contains(Self.v4(192, 0, 2, 9)))
    }

    @Test func announceIPReplacesTheInterfacesAndMustNotBeAWildcard() throws {
        let chosen = try MediaAddresses.choose(
            bind: Self.any6, dualStack: true, announce: Self.v4(203, 0, 113, 7), interfaces: Self.machine)
        #expect(chosen.addresses == [Self.v4(203, 0, 113, 7)])
        #expect(throws: MediaAddresses.Failure.wildcardAnnounced(Self.any4)) {
            try MediaAddresses.choose(bind: Self.any6, dualStack: true, announce: Self.any4, interfaces: Self.machine)
        }
        // An IPv4-only socket cannot receive what an IPv6 announcement brings.
        #expect(throws: MediaAddresses.Failure.self) {
            try MediaAddresses.choose(
                bind: Self.any4, dualStack: false, announce: Self.v6("2001:db8::1"), interfaces: Self.machine)
        }
    }

    @Test func aBoundAddressIsAnnouncedAsItIs() throws {
        let bound = try MediaAddresses.choose(
            bind: Self.v4(10, 77, 2, 1), dualStack: false, announce: nil, interfaces: Self.machine)
        #expect(bound.addresses == [Self.v4(10, 77, 2, 1)])
        #expect(bound.warnings.isEmpty)
        let loopback = try MediaAddresses.choose(
            bind: Self.v4(127, 0, 0, 1), dualStack: false, announce: nil, interfaces: [])
        #expect(loopback.addresses == [Self.v4(127, 0, 0, 1)])
        #expect(loopback.warnings.count == 1)
    }

    @Test func onlyLoopbackLeftIsAnnouncedWithAWarning() throws {
        let lo = Self.machine.filter { $0.name == "lo" }
        let chosen = try MediaAddresses.choose(bind: Self.any6, dualStack: true, announce: nil, interfaces: lo)
        #expect(chosen.addresses == [Self.v4(127, 0, 0, 1), Self.v6("::1")])
        #expect(chosen.warnings.first?.contains("only clients on this machine") == true)
    }

    @Test func nothingLeftRefusesAndSaysWhy() {
        let linkLocalOnly = Self.machine.filter { $0.address.isLinkLocal }
        #expect(throws: MediaAddresses.Failure.nothingToAnnounce(skippedLinkLocal: 1)) {
            try MediaAddresses.choose(bind: Self.any6, dualStack: true, announce: nil, interfaces: linkLocalOnly)
        }
        let text = MediaAddresses.Failure.nothingToAnnounce(skippedLinkLocal: 1).description
        #expect(text.contains("announceIP"))
        #expect(text.contains("announceLinkLocal"))
    }

    @Test func candidatesHaveDistinctPrioritiesIPv6First() {
        let chosen = MediaAddresses(addresses: [
            Self.v4(10, 77, 1, 1), Self.v4(10, 77, 2, 1), Self.v6("fd00:77::1"), Self.v6("fd00:78::1"),
        ])
        let candidates = chosen.candidates(port: 10000)
        #expect(candidates.map(\.address.port) == [10000, 10000, 10000, 10000])
        #expect(candidates.allSatisfy { $0.kind == .host })
        #expect(Set(candidates.map(\.priority)).count == 4)
        // RFC 8445 section 5.1.2.1 with type preference 126 (host): IPv6
        // local preference 65535, 65534; IPv4 32767, 32766.
        func host(_ localPreference: UInt32) -> UInt32 { 126 << 24 | localPreference << 8 | 255 }
        let expected: [UInt32] = [host(32767), host(32766), host(65535), host(65534)]
        #expect(candidates.map(\.priority) == expected)
    }

    /// ICE-TCP's passive candidates (RFC 6544 section 4.2): the same
    /// addresses in the same order, distinct, IPv6 first, all below UDP.
    @Test func tcpCandidatesFollowTheUDPOnesAndRankBelowThem() {
        let chosen = MediaAddresses(addresses: [Self.v4(10, 77, 1, 1), Self.v6("fd00:77::1"), Self.v4(10, 77, 2, 1)])
        let udp = chosen.candidates(port: 10000)
        let tcp = chosen.tcpCandidates(port: 10001)
        #expect(
            tcp.map(\.address)
                == udp.map {
                    var a = $0.address; a.port = 10001; return a.overTCP
                })
        #expect(tcp.allSatisfy { $0.transport == .tcpPassive && $0.kind == .host })
        func passive(_ other: UInt32) -> UInt32 { 90 << 24 | (4 << 13 | other) << 8 | 255 }
        #expect(tcp.map(\.priority) == [passive(8191 - 512), passive(8191), passive(8191 - 513)])
        #expect(tcp.map(\.priority).max()! < udp.map(\.priority).min()!)
    }

    @Test func addressScopes() {
        #expect(Self.any6.isUnspecified && Self.any4.isUnspecified)
        #expect(Self.v4(127, 1, 2, 3).isLoopback && Self.v6("::1").isLoopback && !Self.v6("::2").isLoopback)
        #expect(Self.v6("febf::1").isLinkLocal && !Self.v6("fec0::1").isLinkLocal && Self.v4(169, 254, 0, 1).isLinkLocal)
        #expect(Self.v4(224, 0, 0, 1).isMulticast && Self.v6("ff02::1").isMulticast && !Self.v4(10, 0, 0, 1).isMulticast)
    }
}
