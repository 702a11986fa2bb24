import WorkerRelay

extension FuzzEntryPoints {
    /// Decodes arbitrary bytes as one relay slot (docs/ARCHITECTURE.md,
    /// "Rooms over every worker"). What decodes re-encodes to the same
    /// bytes, through a ring slot of exactly that size, and a slot one byte
    /// short refuses it.
    public static func relayMessage(_ data: UnsafeRawBufferPointer) {
        let message: RelayMessage
        do throws(RelayMessageError) { message = try RelayMessage.decode(data) } catch { return }
        for size in [data.count, data.count - 1] where size >= 0 {
            var slot = [UInt8](repeating: 0xEE, count: size)
            let written = slot.withUnsafeMutableBytes { slot -> Int? in
                switch message {
                case .media(let track, let layer, let rtx, let packet):
                    RelayMessage.encodeMedia(track, layer: layer, isRetransmission: rtx, packet: packet, into: slot)
                case .senderReport(let track, let layer, let ntp, let ts):
                    RelayMessage.encodeSenderReport(track, layer: layer, ntp: ntp, rtpTimestamp: ts, into: slot)
                case .layerBitrates(let track, let rates):
                    RelayMessage.encodeLayerBitrates(track, rates, into: slot)
                case .feedback(let f):
                    RelayMessage.encodeFeedback(f, into: slot)
                }
            }
            if size < data.count {
                precondition(written == nil, "a message was written into a slot too small for it")
                continue
            }
            guard let written else { preconditionFailure("a decoded message does not re-encode") }
            precondition(written == data.count)
            for i in 0..<written { precondition(slot[i] == data[i], "re-encoding changed byte \(i)") }
        }
    }
}
