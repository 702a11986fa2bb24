import STUN
import TURN
import Wire

extension FuzzEntryPoints {
    /// The TURN server's input paths: the bytes as one stream (TCP/TLS)
    /// through `TURNStreamFramer`, every frame into a `TURNServer` as a
    /// stream client's message and as a UDP datagram, and as a datagram
    /// from a peer at every relay; also the whole input as one datagram and
    /// through `ChannelData.parse`. Checks: a ChannelData range lies inside
    /// the input; the framer never buffers more than one frame; everything
    /// the engine sends a client parses as STUN or ChannelData, and the
    /// engine only ever relays toward the allowed peer.
    public static func turn(_ data: UnsafeRawBufferPointer) {
        if let (channel, range) = try? ChannelData.parse(data) {
            precondition(ChannelData.channelNumbers.contains(channel) && range.upperBound <= data.count)
        }
        let peer = TransportAddress(ipv4: 127, 0, 0, 1, port: 10000)
        var server = TURNServer(
            credentials: TURNCredentials(secret: [1, 2, 3]), policy: TURNPeerPolicy(allowed: [peer]), nonceKey: [4, 5, 6])
        let udp = TURNClient(transport: .udp, address: TransportAddress(ipv4: 127, 0, 0, 1, port: 40000))
        let tcp = TURNClient(transport: .tcp, address: udp.address, connection: 1)
        var port: UInt16 = 50000
        let open: (TURNClient, Bool) -> TransportAddress? = { _, _ in
            port += 2
            return TransportAddress(ipv4: 127, 0, 0, 1, port: port)
        }
        let now = Instant(nanoseconds: 1_000_000_000)
        server.handleClient(data, from: udp, now: now, unixSeconds: 0, openRelay: open)
        drain(&server, allowed: peer)
        var framer = TURNStreamFramer()
        framer.append(data)
        while let frame = try? framer.next() {
            precondition(frame.count <= TURNStreamFramer.maxFrameLength)
            server.handleClient(frame, from: tcp, now: now, unixSeconds: 0, openRelay: open)
            server.handleClient(frame, from: udp, now: now, unixSeconds: 0, openRelay: open)
            for relay in server.relays { server.handlePeer(frame, relay: relay, from: peer, now: now) }
            drain(&server, allowed: peer)
        }
        precondition(framer.bufferedCount <= TURNStreamFramer.maxFrameLength)
        server.handleTimeout(now: now + .seconds(7200))
        drain(&server, allowed: peer)
        precondition(server.allocationCount == 0)
    }

    private static func drain(_ server: inout TURNServer, allowed: TransportAddress) {
        while let output = server.pollOutput() {
            switch output {
            case .toClient(_, let bytes):
                if let first = bytes.first, ChannelData.isChannelData(firstByte: first) {
                    precondition((try? bytes.withUnsafeBytes { try ChannelData.parse($0) }) != nil)
                } else {
                    precondition((try? STUNMessage.parse(bytes)) != nil, "the server sent a message it cannot parse")
                }
            case .toPeer(_, let peer, _):
                precondition(peer == allowed, "relayed toward a peer outside the policy")
            case .releaseRelay:
                break
            }
        }
    }
}
