import DataChannel
import Testing
import Wire

@testable import SCTP

/// Two endpoints, a browser-like DTLS client and our DTLS server side,
/// over real usrsctp. Serialised with the association tests' clock.
extension SCTPAssociationTests {
    static func pump(
        _ a: DataChannelEndpoint, _ b: DataChannelEndpoint, now: Instant
    ) -> (a: [DataChannelEvent], b: [DataChannelEvent]) {
        var eventsA: [DataChannelEvent] = []
        var eventsB: [DataChannelEvent] = []
        for _ in 0..<1000 {
            var moved = false
            while let packet = a.pollTransmit() {
                moved = true
                b.handle(packet: packet, now: now)
            }
            while let packet = b.pollTransmit() {
                moved = true
                a.handle(packet: packet, now: now)
            }
            while let event = a.pollEvent() { eventsA.append(event) }
            while let event = b.pollEvent() { eventsB.append(event) }
            if !moved { break }
        }
        return (eventsA, eventsB)
    }

    @Test func opensAChannelWithDCEPAndExchangesStringsAndBinaries() throws {
        let now = Instant(nanoseconds: 8_000_000_000)
        let client = try DataChannelEndpoint(role: .dtlsClient, now: now)
        let server = try DataChannelEndpoint(role: .dtlsServer, now: now)
        let ready = Self.pump(client, server, now: now)
        #expect(ready.a == [.ready] && ready.b == [.ready])

        let reliable = try #require(client.open(label: "chat", channelType: .init(policy: .reliable, unordered: false)))
        let lossy = try #require(
            client.open(label: "state", channelType: .init(policy: .partialReliableRetransmit, unordered: true)))
        #expect(reliable == 0 && lossy == 2)
        let opened = Self.pump(client, server, now: now)
        #expect(opened.b.count == 2 && opened.a.count == 2)
        #expect(server.table.channels[2]?.channelType.unordered == true)

        try client.send(stream: 0, isText: true, payload: Array("hello".utf8))
        try client.send(stream: 2, isText: false, payload: [1, 2])
        try server.send(stream: 0, isText: true, payload: [])
        let messages = Self.pump(client, server, now: now)
        #expect(
            messages.b == [
                .message(stream: 0, isText: true, payload: Array("hello".utf8)),
                .message(stream: 2, isText: false, payload: [1, 2]),
            ])
        #expect(messages.a == [.message(stream: 0, isText: true, payload: [])])

        client.close(stream: 0)
        let closed = Self.pump(client, server, now: now)
        #expect(closed.b == [.channelClosed(stream: 0)])
        #expect(server.table.channels[0] == nil)
    }
}
