import DataChannel
import Wire

/// What a `DataChannelEndpoint` reports.
package enum DataChannelEvent: Equatable, Sendable {
    /// The association is up: channels may open.
    case ready
    /// The peer opened a channel (we acknowledged it), or acknowledged ours.
    case opened(DataChannelTable.Channel)
    case message(stream: UInt16, isText: Bool, payload: [UInt8])
    /// The peer reset the channel's stream (RFC 8831 section 6.7).
    case channelClosed(stream: UInt16)
    /// A message we could not use, dropped; the association stays.
    case refused(DataChannelTable.InputError)
    /// The association ended.
    case closed
}

/// Data channels over one SCTP association (RFC 8831): usrsctp for SCTP,
/// `DataChannelTable` for DCEP and the streams. The same shape as the
/// association: packets in and out (DTLS application data), events out,
/// time in.
package final class DataChannelEndpoint {
    package let association: SCTPAssociation
    package private(set) var table: DataChannelTable
    private var events: [DataChannelEvent] = []
    /// Refusals dropped once `maximumQueuedEvents` events wait.
    package private(set) var droppedEvents = 0

    /// - Parameters:
    ///   - role: our DTLS role, which decides our stream parity (RFC 8832
    ///     section 6).
    ///   - maximumChannels: channels the peer and we may open together.
    package init(
        role: DataChannelTable.Role, configuration: SCTPConfiguration = SCTPConfiguration(), maximumChannels: Int = 16,
        now: Instant
    ) throws(SCTPError) {
        association = try SCTPAssociation(configuration: configuration, now: now)
        table = DataChannelTable(role: role, streams: configuration.streams, maximumChannels: maximumChannels)
    }

    /// One SCTP packet (a DTLS application data record).
    package func handle(packet: [UInt8], now: Instant) {
        association.handle(packet: packet, now: now)
        drain()
    }

    package func handleTimeout(now: Instant) {
        association.handleTimeout(now: now)
        drain()
    }

    package var nextDeadline: Instant? { association.nextDeadline }

    package func pollTransmit() -> [UInt8]? { association.pollTransmit() }

    package func pollEvent() -> DataChannelEvent? {
        drain()
        return events.isEmpty ? nil : events.removeFirst()
    }

    /// Opens a channel of ours (DATA_CHANNEL_OPEN on a free stream of our
    /// parity, RFC 8832 section 6); nil when no stream is free or the
    /// association refused the message.
    package func open(label: String, channelType: DataChannelType, reliabilityParameter: UInt32 = 0) -> UInt16? {
        guard
            let (channel, message) = table.open(
                label: label, channelType: channelType, reliabilityParameter: reliabilityParameter)
        else { return nil }
        do {
            try association.send(
                message, stream: channel.stream, ppid: PayloadProtocolIdentifier.dcep.rawValue,
                reliability: .reliableOrdered)
        } catch {
            table.close(stream: channel.stream)
            return nil
        }
        return channel.stream
    }

    /// Sends one user message on the channel of `stream`, with the
    /// channel's reliability (RFC 8831 section 6.6). Our own channel sends
    /// ordered until the peer's ACK (RFC 8832 section 6).
    package func send(stream: UInt16, isText: Bool, payload: [UInt8]) throws(SCTPError) {
        guard let channel = table.channels[stream] else { throw .streamOutOfRange(stream) }
        let (ppid, bytes) = DataChannelTable.userMessage(isText: isText, payload: payload)
        try association.send(
            bytes, stream: stream, ppid: ppid, reliability: Self.reliability(of: channel))
    }

    /// Closes a channel: resets its outgoing stream (RFC 8831 section 6.7).
    package func close(stream: UInt16) {
        guard table.close(stream: stream) != nil else { return }
        association.resetStream(stream)
    }

    package func close() { association.close() }

    /// RFC 8831 section 6.6 and RFC 8832 section 5.1: the channel type
    /// maps to SCTP's unordered flag and a PR-SCTP policy. The timed
    /// policy (PR-SCTP "ttl") is sent fully reliable here: usrsctp's shim
    /// exposes only the retransmission-count policy, so a timed channel
    /// gets more delivery than it asked for, never less.
    static func reliability(of channel: DataChannelTable.Channel) -> SCTPReliability {
        let unordered = channel.channelType.unordered && !channel.awaitingAcknowledgement
        switch channel.channelType.policy {
        case .partialReliableRetransmit:
            return SCTPReliability(unordered: unordered, maximumRetransmits: channel.reliabilityParameter)
        case .reliable, .partialReliableTimed:
            return SCTPReliability(unordered: unordered, maximumRetransmits: nil)
        }
    }

    private func drain() {
        while let event = association.pollEvent() {
            switch event {
            case .established:
                events.append(.ready)
            case .closed:
                events.append(.closed)
            case .streamReset(let stream):
                if table.close(stream: stream) != nil {
                    // RFC 8831 section 6.7: answer with a reset of our
                    // outgoing stream of the same id.
                    association.resetStream(stream)
                    append(.channelClosed(stream: stream))
                }
            case .message(let message):
                do {
                    switch try table.receive(stream: message.stream, ppid: message.ppid, payload: message.payload) {
                    case .opened(let channel, let acknowledgement):
                        try? association.send(
                            acknowledgement, stream: channel.stream, ppid: PayloadProtocolIdentifier.dcep.rawValue,
                            reliability: .reliableOrdered)
                        append(.opened(channel))
                    case .acknowledged(let stream):
                        if let channel = table.channels[stream] { append(.opened(channel)) }
                    case .message(let stream, let isText, let payload):
                        append(.message(stream: stream, isText: isText, payload: payload))
                    }
                } catch {
                    append(.refused(error))
                }
            }
        }
    }

    private func append(_ event: DataChannelEvent) {
        guard events.count < association.configuration.maximumQueuedEvents else {
            droppedEvents &+= 1
            return
        }
        events.append(event)
    }
}
