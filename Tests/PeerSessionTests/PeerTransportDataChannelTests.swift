import DataChannel
import PeerSession
import RTP
import SCTP
import SFUTesting
import Testing
import Wire

/// Data channels over a real DTLS pair and real usrsctp (RFC 8261, 8831).
@Suite struct PeerTransportDataChannelTests {
    private func messages(_ events: [PeerTransportEvent]) -> [DataChannelEvent] {
        events.compactMap { if case .dataChannel(let e) = $0 { e } else { nil } }
    }

    @Test func carriesDataChannelMessagesBothWaysOverDTLS() throws {
        let link = try TransportLink()
        link.server.enableDataChannels(SCTPConfiguration(), now: link.clock.now)
        link.client.enableDataChannels(SCTPConfiguration(), now: link.clock.now)
        #expect(link.connect())
        link.run(for: .milliseconds(50))
        #expect(messages(link.serverEvents).contains(.ready))
        #expect(messages(link.clientEvents).contains(.ready))

        let reliable = link.client.openDataChannel(
            label: "chat", channelType: .init(policy: .reliable, unordered: false), now: link.clock.now)
        let lossy = link.client.openDataChannel(
            label: "state", channelType: .init(policy: .partialReliableRetransmit, unordered: true), now: link.clock.now)
        #expect(reliable == 0 && lossy == 2)
        link.run(for: .milliseconds(50))
        try link.client.sendData(stream: 0, isText: true, payload: Array("hi".utf8), now: link.clock.now)
        try link.client.sendData(stream: 2, isText: false, payload: [1, 2, 3], now: link.clock.now)
        try link.server.sendData(stream: 0, isText: true, payload: Array("back".utf8), now: link.clock.now)
        link.run(for: .milliseconds(50))

        let atServer = messages(link.serverEvents).filter { if case .message = $0 { true } else { false } }
        #expect(
            atServer == [
                .message(stream: 0, isText: true, payload: Array("hi".utf8)),
                .message(stream: 2, isText: false, payload: [1, 2, 3]),
            ])
        #expect(messages(link.clientEvents).contains(.message(stream: 0, isText: true, payload: Array("back".utf8))))
        #expect(throws: SCTPError.messageTooLarge(size: 65_537, limit: 65_536)) {
            try link.client.sendData(stream: 0, isText: false, payload: [UInt8](repeating: 0, count: 65_537), now: link.clock.now)
        }
        #expect(link.server.state == .connected && link.client.state == .connected)
    }

    /// Authenticated DTLS records whose SCTP content is garbage: each costs
    /// its record (usrsctp drops it: checksum, verification tag); the
    /// association, the channels, the transport and media carry on.
    @Test func garbageApplicationDataCostsOneRecord() throws {
        let link = try TransportLink()
        link.server.enableDataChannels(SCTPConfiguration(), now: link.clock.now)
        link.client.enableDataChannels(SCTPConfiguration(), now: link.clock.now)
        #expect(link.connect())
        link.run(for: .milliseconds(100))
        let stream = link.client.openDataChannel(
            label: "chat", channelType: .init(policy: .reliable, unordered: false), now: link.clock.now)
        link.run(for: .milliseconds(100))
        var random = SeededGenerator(state: 0x5C7)
        var garbage: [[UInt8]] = [[0], [1, 2, 3], Array(repeating: 0xFF, count: 1100)]
        // SCTP common headers with our ports and a wrong checksum.
        garbage.append([0x13, 0x88, 0x13, 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4])
        garbage.append([0x13, 0x88, 0x13, 0x88, 0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4] + Array(repeating: 0, count: 40))
        for length in [12, 20, 64, 500] { garbage.append((0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }) }
        for record in garbage { #expect(link.client.sendRawApplicationRecord(record, now: link.clock.now)) }
        link.run(for: .milliseconds(100))
        try link.client.sendData(
            stream: try #require(stream), isText: true, payload: Array("still here".utf8), now: link.clock.now)
        #expect(link.sendMedia(RTPBuilders.packet(sequenceNumber: 1, ssrc: 0x0102_0304, payload: [1, 2, 3]), from: .client))
        link.run(for: .milliseconds(100))
        #expect(messages(link.serverEvents).contains(.message(stream: 0, isText: true, payload: Array("still here".utf8))))
        #expect(!messages(link.serverEvents).contains(.closed))
        #expect(link.server.state == .connected && link.client.state == .connected)
        #expect(link.serverReceived.count == 1)
    }

    @Test func withoutDataChannelsApplicationDataIsDropped() throws {
        let link = try TransportLink()
        link.client.enableDataChannels(SCTPConfiguration(), now: link.clock.now)
        #expect(link.connect())
        link.run(for: .milliseconds(100))
        // The client's INITs reach a server that negotiated no data
        // channels: each record is read and dropped; media goes on.
        #expect(!messages(link.clientEvents).contains(.ready))
        #expect(link.server.state == .connected)
        #expect(link.server.dataChannels == nil)
    }
}
