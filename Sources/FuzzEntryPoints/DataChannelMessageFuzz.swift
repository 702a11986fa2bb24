import DataChannel

extension FuzzEntryPoints {
    /// DCEP (RFC 8832) and the channel table: the first byte picks the
    /// PPID (low two bits: 50 DCEP, 51 string, 53 binary, or 50 plus the
    /// upper six bits) and a stream, the rest is one SCTP user message into a
    /// server-side table with small bounds. What parses writes again and
    /// parses equal; the table never holds more channels than its limit.
    public static func dataChannelMessage(_ data: UnsafeRawBufferPointer) {
        guard let selector = data.first else { return }
        let payload = Array(data.dropFirst())
        if let message = try? DataChannelMessage.parse(payload) {
            if case .open(let open) = message {
                precondition(open.label.utf8.count <= DataChannelMessage.maximumTextLength)
                precondition(open.protocol.utf8.count <= DataChannelMessage.maximumTextLength)
            }
            precondition(
                (try? DataChannelMessage.parse(message.serialized)) == message, "a DCEP message does not read back")
        }
        let ppids: [UInt32] = [50, 51, 53, 50 + UInt32(selector >> 2)]
        var table = DataChannelTable(role: .dtlsServer, streams: 8, maximumChannels: 2)
        for stream: UInt16 in [0, 2, 4, UInt16(selector >> 4)] {
            _ = try? table.receive(stream: stream, ppid: ppids[Int(selector & 3)], payload: payload)
            _ = try? table.receive(stream: stream, ppid: 50, payload: payload)
            precondition(table.channels.count <= 2)
        }
    }
}
