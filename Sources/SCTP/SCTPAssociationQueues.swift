import CSCTPShim

/// What usrsctp's callbacks fill for one association: packets to send,
/// events, and a message being reassembled. Its address is the one we
/// register with usrsctp (`usrsctp_register_address`): usrsctp hands it
/// back as the conn output callback's `addr` and as the socket's
/// `ulp_info`, so a callback reaches its association by pointer, with no
/// table and no lookup.
///
/// Every access happens under `SCTPStack`'s lock (callbacks run inside
/// locked usrsctp calls; the owner polls under it too), which is why the
/// class is `@unchecked Sendable`.
final class SCTPAssociationQueues: @unchecked Sendable {
    let configuration: SCTPConfiguration
    var packets: [[UInt8]] = []
    var events: [SCTPEvent] = []
    /// A message arriving in pieces (usrsctp's partial delivery), bounded
    /// by the maximum message size.
    var partial: [UInt8] = []
    var partialOverflowed = false
    var established = false
    var closed = false
    /// Counters for what was dropped by our bounds.
    var droppedPackets = 0
    var droppedEvents = 0
    var oversizedMessages = 0

    init(configuration: SCTPConfiguration) {
        self.configuration = configuration
    }

    static func from(_ context: UnsafeMutableRawPointer) -> SCTPAssociationQueues {
        Unmanaged<SCTPAssociationQueues>.fromOpaque(context).takeUnretainedValue()
    }

    func output(_ packet: UnsafeRawBufferPointer) {
        guard !closed else { return }
        guard packets.count < configuration.maximumQueuedPackets else {
            // SCTP retransmits what is lost here, as on a full link.
            droppedPackets &+= 1
            return
        }
        packets.append(Array(packet))
    }

    func deliver(stream: UInt16, ppid: UInt32, unordered: Bool, endOfRecord: Bool, data: UnsafeRawBufferPointer) {
        if partial.count + data.count > configuration.maximumMessageSize {
            partialOverflowed = true
        } else if !partialOverflowed {
            partial.append(contentsOf: data)
        }
        guard endOfRecord else { return }
        defer {
            partial.removeAll(keepingCapacity: false)
            partialOverflowed = false
        }
        if partialOverflowed {
            oversizedMessages &+= 1
            return
        }
        enqueue(.message(SCTPMessage(stream: stream, ppid: ppid, unordered: unordered, payload: partial)))
    }

    func notify(kind: Int32, stream: UInt16) {
        switch kind {
        case Int32(SWIFTLET_SCTP_EVENT_UP):
            guard !established else { return }
            established = true
            enqueue(.established)
        case Int32(SWIFTLET_SCTP_EVENT_DOWN):
            guard !closed else { return }
            closed = true
            established = false
            // Always reported, past the bound: the owner must learn of it.
            events.append(.closed)
        case Int32(SWIFTLET_SCTP_EVENT_STREAM_RESET_INCOMING):
            enqueue(.streamReset(stream))
        default:
            break
        }
    }

    private func enqueue(_ event: SCTPEvent) {
        guard events.count < configuration.maximumQueuedEvents else {
            droppedEvents &+= 1
            return
        }
        events.append(event)
    }
}
