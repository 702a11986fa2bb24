import DataChannel
import PeerSession
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
