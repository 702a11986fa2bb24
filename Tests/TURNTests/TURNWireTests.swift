import Foundation
import STUN
import TURN
import Testing
import Wire

@Suite struct TURNWireTests {
    @Test func turnAttributesRoundTripThroughBuilderAndParser() throws {
        let id = TransactionID.random()
        var b = STUNMessageBuilder(type: STUNMessageType(method: .channelBind, class: .request), transactionID: id)
        let v4 = TransportAddress(ipv4: 192, 0, 2, 1, port: 3478)
        let v6 = TransportAddress(ipv6: 0x2001_0db8_0000_0000, 1, port: 443)
        try b.appendXORPeerAddress(v4)
        try b.appendXORPeerAddress(v6)
        try b.appendXORRelayedAddress(v6)
        try b.appendChannelNumber(0x4ABC)
        try b.appendLifetime(seconds: 1234)
        try b.appendRequestedTransport()
        try b.appendData([1, 2, 3, 4, 5])
        let m = try STUNMessage.parse(b.bytes)
        #expect(m.type.method == .channelBind)
        #expect(m.turn.xorPeerAddresses == [v4, v6])
        #expect(m.turn.xorRelayedAddress == v6)
        #expect(m.turn.channelNumber == 0x4ABC)
        #expect(m.turn.lifetime == 1234)
        #expect(m.turn.requestedTransport == 17)
        #expect(m.turn.data.map { Array(b.bytes[$0.valueRange]) } == [1, 2, 3, 4, 5])
        #expect(m.unknownComprehensionRequired.isEmpty)
    }

    @Test func malformedTURNAttributesAreTypedErrors() throws {
        for (type, value) in [
            (STUNAttributeType.lifetime, [UInt8](repeating: 0, count: 3)), (.channelNumber, [0x40]),
            (.xorPeerAddress, [0, 1, 0, 0, 1]), (.requestedTransport, [17]), (.dontFragment, [1]),
        ] {
            var b = STUNMessageBuilder(type: STUNMessageType(method: .allocate, class: .request), transactionID: .random())
            try b.appendAttribute(type, value: value)
            #expect(throws: STUNParseError.malformedAttribute(type)) { try STUNMessage.parse(b.bytes) }
        }
        var many = STUNMessageBuilder(type: STUNMessageType(method: .createPermission, class: .request), transactionID: .random())
        for port in 1...9 { try many.appendXORPeerAddress(TransportAddress(ipv4: 10, 0, 0, 1, port: UInt16(port))) }
        #expect(throws: STUNParseError.malformedAttribute(.xorPeerAddress)) { try STUNMessage.parse(many.bytes) }
    }

    @Test func channelDataParsesAndBuildsWithPaddingOnStreams() throws {
        let payload: [UInt8] = [9, 8, 7, 6, 5]
        let padded = payload.withUnsafeBytes { ChannelData.build(channel: 0x4001, data: $0, padded: true) }
        #expect(padded == [0x40, 0x01, 0, 5, 9, 8, 7, 6, 5, 0, 0, 0])
        let parsed = try padded.withUnsafeBytes { try ChannelData.parse($0) }
        #expect(parsed.channel == 0x4001 && parsed.data == 4..<9)
        #expect(throws: TURNParseError.badChannelNumber) {
            try ([0x80, 0, 0, 0] as [UInt8]).withUnsafeBytes { try ChannelData.parse($0) }
        }
        #expect(throws: TURNParseError.truncated) {
            try ([0x40, 0, 0, 1] as [UInt8]).withUnsafeBytes { try ChannelData.parse($0) }
        }
    }

    @Test func theStreamFramerSplitsSTUNAndChannelDataAcrossArbitraryChunks() throws {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: .random())
        try b.appendSoftware("x")
        let stun = b.bytes
        let channel: [UInt8] = [0x40, 0x00, 0, 3, 1, 2, 3, 0]
        let stream = stun + channel + stun
        for chunk in [1, 3, 7, stream.count] {
            var framer = TURNStreamFramer()
            var frames: [[UInt8]] = []
            var i = 0
            while i < stream.count {
                framer.append(Array(stream[i..<min(i + chunk, stream.count)]))
                while let f = try framer.next() { frames.append(f) }
                i += chunk
            }
            #expect(frames == [stun, channel, stun], "chunk \(chunk)")
            #expect(framer.bufferedCount == 0)
        }
        var bad = TURNStreamFramer()
        bad.append([0x80, 0, 0, 0])
        #expect(throws: TURNParseError.notTURN) { try bad.next() }
    }

    @Test func restCredentialsCarryTheirExpiry() throws {
        let credentials = TURNCredentials(secret: Array("s".utf8))
        let issued = try #require(credentials.issue(identity: "alice", nowSeconds: 100, lifetimeSeconds: 50))
        #expect(issued.username == "150:alice")
        #expect(credentials.check(username: issued.username, nowSeconds: 149) == .success(issued.password))
        #expect(credentials.check(username: issued.username, nowSeconds: 150) == .failure(.expired))
        #expect(credentials.check(username: "alice", nowSeconds: 0) == .failure(.malformed))
        #expect(credentials.check(username: "150:", nowSeconds: 0) == .failure(.malformed))
        // The REST API convention, computed independently with Python:
        // base64.b64encode(hmac.new(b"s", b"150:alice", hashlib.sha1).digest())
        #expect(issued.password == "gZLHrtMkaGRBf4raXY16rIvKzvs=")
    }

    @Test func theLongTermKeyIsMD5OfUsernameRealmPassword() {
        // Checked with md5sum: echo -n 'user:realm:pass' | md5sum
        let key = STUNMessage.longTermKey(username: "user", realm: "realm", password: "pass")
        #expect(key.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() == "8493fbc53ba582fb4c044c456bdc40eb")
    }
}

@Suite struct TURNFuzzSeedTests {
    /// The fuzz corpus's session seed (Fuzz/Corpus/turn, written by a short
    /// Python script from the RFCs' formulas, not by this code) must reach
    /// the deep paths: allocated, permitted, bound, relayed twice, deleted.
    @Test func theSessionSeedDrivesTheEngineThroughAWholeAllocation() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(
            path: "../../Fuzz/Corpus/turn/stream-session")
        let bytes = [UInt8](try Data(contentsOf: url))
        let peer = TransportAddress(ipv4: 127, 0, 0, 1, port: 10000)
        var server = TURNServer(
            credentials: TURNCredentials(secret: [1, 2, 3]), policy: TURNPeerPolicy(allowed: [peer]), nonceKey: [4, 5, 6])
        let client = TURNClient(transport: .udp, address: TransportAddress(ipv4: 127, 0, 0, 1, port: 40000))
        var framer = TURNStreamFramer()
        framer.append(bytes)
        var outputs: [TURNOutput] = []
        while let frame = try framer.next() {
            server.handleClient(frame, from: client, now: Instant(nanoseconds: 1_000_000_000), unixSeconds: 0) { _, _ in
                TransportAddress(ipv4: 127, 0, 0, 1, port: 50000)
            }
            while let o = server.pollOutput() { outputs.append(o) }
        }
        let relay = TransportAddress(ipv4: 127, 0, 0, 1, port: 50000)
        let hello = Array("hello".utf8)
        #expect(outputs.filter { $0 == .toPeer(relay: relay, peer: peer, hello) }.count == 2, "\(outputs)")
        #expect(outputs.contains(.releaseRelay(relay)))
        #expect(server.counters.unauthorized == 0)
    }
}
