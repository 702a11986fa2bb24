/// The data channels of one SCTP association (RFC 8831, RFC 8832): which
/// stream carries which channel, the DCEP handshake, and what a user
/// message on a stream means. Pure: SCTP messages in, decisions out.
///
/// Stream ids (RFC 8832 section 6): the DTLS client opens channels on even
/// streams, the DTLS server on odd ones, so both ends can open at once.
package struct DataChannelTable: Sendable {
    package enum Role: Sendable, Equatable {
        /// Our DTLS role is client: we open even streams.
        case dtlsClient
        case dtlsServer
    }

    package struct Channel: Equatable, Sendable {
        package var stream: UInt16
        package var label: String
        package var `protocol`: String
        package var channelType: DataChannelType
        package var reliabilityParameter: UInt32
        /// Our own channel waiting for the peer's ACK. RFC 8832 section 6
        /// lets us send on it at once (ordered until acknowledged).
        package var awaitingAcknowledgement: Bool
    }

    /// What one incoming SCTP message means.
    package enum Input: Equatable, Sendable {
        /// The peer opened a channel; send `acknowledgement` on its stream
        /// with PPID 50, reliable and ordered (RFC 8832 section 6).
        case opened(Channel, acknowledgement: [UInt8])
        case acknowledged(stream: UInt16)
        /// A user message; `isText` from the PPID, `payload` empty for the
        /// empty-message PPIDs.
        case message(stream: UInt16, isText: Bool, payload: [UInt8])
    }

    package enum InputError: Error, Equatable, Sendable {
        case malformedDCEP(DataChannelMessageError)
        /// A user message or ACK on a stream with no channel.
        case unknownStream(UInt16)
        /// An OPEN on a stream already carrying a channel.
        case streamInUse(UInt16)
        /// An OPEN on a stream of our parity (a peer must use its own).
        case wrongStreamParity(UInt16)
        case tooManyChannels(limit: Int)
        case streamOutOfRange(UInt16)
        /// PPIDs other than RFC 8831 section 8's (52 and 54 included:
        /// deprecated partial delivery).
        case unknownPayloadProtocol(UInt32)
    }

    package let role: Role
    /// Streams usable: those negotiated for the association.
    package let streams: UInt16
    package let maximumChannels: Int
    package private(set) var channels: [UInt16: Channel] = [:]

    package init(role: Role, streams: UInt16, maximumChannels: Int) {
        self.role = role
        self.streams = streams
        self.maximumChannels = maximumChannels
    }

    private func isOurs(_ stream: UInt16) -> Bool {
        (stream % 2 == 0) == (role == .dtlsClient)
    }

    /// Interprets one SCTP user message.
    package mutating func receive(stream: UInt16, ppid: UInt32, payload: [UInt8]) throws(InputError) -> Input {
        guard stream < streams else { throw .streamOutOfRange(stream) }
        if ppid == PayloadProtocolIdentifier.dcep.rawValue {
            let message: DataChannelMessage
            do { message = try DataChannelMessage.parse(payload) } catch { throw .malformedDCEP(error) }
            switch message {
            case .ack:
                guard channels[stream] != nil else { throw .unknownStream(stream) }
                channels[stream]?.awaitingAcknowledgement = false
                return .acknowledged(stream: stream)
            case .open(let open):
                guard channels[stream] == nil else { throw .streamInUse(stream) }
                guard !isOurs(stream) else { throw .wrongStreamParity(stream) }
                guard channels.count < maximumChannels else { throw .tooManyChannels(limit: maximumChannels) }
                let channel = Channel(
                    stream: stream, label: open.label, protocol: open.protocol, channelType: open.channelType,
                    reliabilityParameter: open.reliabilityParameter, awaitingAcknowledgement: false)
                channels[stream] = channel
                return .opened(channel, acknowledgement: DataChannelMessage.ack.serialized)
            }
        }
        guard let kind = PayloadProtocolIdentifier(rawValue: ppid), let isText = kind.isText else {
            throw .unknownPayloadProtocol(ppid)
        }
        guard channels[stream] != nil else { throw .unknownStream(stream) }
        return .message(stream: stream, isText: isText, payload: kind.isEmpty ? [] : payload)
    }

    /// Opens a channel of ours on the lowest free stream of our parity;
    /// returns it and the DATA_CHANNEL_OPEN to send on its stream with
    /// PPID 50. Nil when every stream or channel slot is taken.
    package mutating func open(
        label: String, protocol: String = "", channelType: DataChannelType, reliabilityParameter: UInt32 = 0
    ) -> (Channel, openMessage: [UInt8])? {
        guard channels.count < maximumChannels else { return nil }
        var stream: UInt16 = role == .dtlsClient ? 0 : 1
        while stream < streams, channels[stream] != nil { stream &+= 2 }
        guard stream < streams else { return nil }
        let channel = Channel(
            stream: stream, label: label, protocol: `protocol`, channelType: channelType,
            reliabilityParameter: reliabilityParameter, awaitingAcknowledgement: true)
        channels[stream] = channel
        let message = DataChannelMessage.open(
            DataChannelOpen(
                channelType: channelType, reliabilityParameter: reliabilityParameter, label: label,
                protocol: `protocol`))
        return (channel, message.serialized)
    }

    /// The peer reset the stream (RFC 8831 section 6.7): its channel is gone.
    @discardableResult
    package mutating func close(stream: UInt16) -> Channel? {
        channels.removeValue(forKey: stream)
    }

    /// The PPID and payload for a user message (RFC 8831 section 6.6: an
    /// empty message is one zero byte with the empty PPID).
    package static func userMessage(isText: Bool, payload: [UInt8]) -> (ppid: UInt32, payload: [UInt8]) {
        if payload.isEmpty {
            return ((isText ? PayloadProtocolIdentifier.emptyString : .emptyBinary).rawValue, [0])
        }
        return ((isText ? PayloadProtocolIdentifier.string : .binary).rawValue, payload)
    }
}
