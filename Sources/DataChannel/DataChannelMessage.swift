import Wire

/// A DCEP message (RFC 8832 section 5), carried on a data channel's stream
/// with PPID 50.
package enum DataChannelMessage: Equatable, Sendable {
    case open(DataChannelOpen)
    /// DATA_CHANNEL_ACK (RFC 8832 section 5.2).
    case ack

    /// RFC 8832 section 8.2.1.
    static let openType: UInt8 = 0x03
    static let ackType: UInt8 = 0x02
}

/// The channel type byte of DATA_CHANNEL_OPEN (RFC 8832 section 5.1): the
/// high bit says unordered, the rest the reliability policy.
package struct DataChannelType: Equatable, Sendable {
    package enum Policy: UInt8, Sendable {
        case reliable = 0x00
        /// At most `reliabilityParameter` retransmissions (RFC 3758).
        case partialReliableRetransmit = 0x01
        /// Retransmitted for at most `reliabilityParameter` milliseconds.
        case partialReliableTimed = 0x02
    }

    package var policy: Policy
    package var unordered: Bool

    package init(policy: Policy, unordered: Bool) {
        self.policy = policy
        self.unordered = unordered
    }

    init?(byte: UInt8) {
        guard let policy = Policy(rawValue: byte & 0x7F) else { return nil }
        self.init(policy: policy, unordered: byte & 0x80 != 0)
    }

    var byte: UInt8 { policy.rawValue | (unordered ? 0x80 : 0) }
}

/// DATA_CHANNEL_OPEN (RFC 8832 section 5.1).
package struct DataChannelOpen: Equatable, Sendable {
    package var channelType: DataChannelType
    package var priority: UInt16
    package var reliabilityParameter: UInt32
    /// UTF-8 (RFC 8832 section 5.1: "The label ... SHOULD be UTF-8").
    package var label: String
    package var `protocol`: String

    package init(
        channelType: DataChannelType, priority: UInt16 = 256, reliabilityParameter: UInt32 = 0, label: String,
        protocol: String = ""
    ) {
        self.channelType = channelType
        self.priority = priority
        self.reliabilityParameter = reliabilityParameter
        self.label = label
        self.protocol = `protocol`
    }
}

/// Why a DCEP message was refused.
package enum DataChannelMessageError: Error, Equatable, Sendable {
    case empty
    case unknownMessageType(UInt8)
    case truncated
    case unknownChannelType(UInt8)
    /// Label or protocol longer than we accept (`DataChannelMessage.maximumTextLength`).
    case textTooLong(Int)
    case invalidUTF8
    /// Bytes after the label and protocol.
    case trailingBytes
}

extension DataChannelMessage {
    /// Labels and protocols beyond this are refused: RFC 8832 allows 65535
    /// bytes; browsers cap labels at 65535 too, but nothing needs more than
    /// a few words.
    package static let maximumTextLength = 1024

    /// Parses one DCEP message. Every length is checked against the bytes
    /// present and against `maximumTextLength`.
    package static func parse(_ bytes: RawSpan) throws(DataChannelMessageError) -> DataChannelMessage {
        var reader = ByteReader(bytes)
        let type = try reader.uint8(or: DataChannelMessageError.empty)
        switch type {
        case ackType:
            // RFC 8832 section 5.2: the ACK is one byte; ignore nothing after it.
            guard reader.isAtEnd else { throw .trailingBytes }
            return .ack
        case openType:
            let typeByte = try reader.uint8(or: DataChannelMessageError.truncated)
            guard let channelType = DataChannelType(byte: typeByte) else { throw .unknownChannelType(typeByte) }
            let priority = try reader.uint16(or: DataChannelMessageError.truncated)
            let reliability = try reader.uint32(or: DataChannelMessageError.truncated)
            let labelLength = Int(try reader.uint16(or: DataChannelMessageError.truncated))
            let protocolLength = Int(try reader.uint16(or: DataChannelMessageError.truncated))
            guard labelLength <= maximumTextLength else { throw .textTooLong(labelLength) }
            guard protocolLength <= maximumTextLength else { throw .textTooLong(protocolLength) }
            let label = try text(&reader, count: labelLength)
            let proto = try text(&reader, count: protocolLength)
            guard reader.isAtEnd else { throw .trailingBytes }
            return .open(
                DataChannelOpen(
                    channelType: channelType, priority: priority, reliabilityParameter: reliability, label: label,
                    protocol: proto))
        default:
            throw .unknownMessageType(type)
        }
    }

    package static func parse(_ bytes: [UInt8]) throws(DataChannelMessageError) -> DataChannelMessage {
        try parse(bytes.span.bytes)
    }

    private static func text(_ reader: inout ByteReader, count: Int) throws(DataChannelMessageError) -> String {
        let bytes = try reader.bytesArray(count, or: DataChannelMessageError.truncated)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        return text
    }

    /// The message on the wire.
    package var serialized: [UInt8] {
        switch self {
        case .ack:
            return [Self.ackType]
        case .open(let open):
            let label = Array(open.label.utf8.prefix(Self.maximumTextLength))
            let proto = Array(open.protocol.utf8.prefix(Self.maximumTextLength))
            var writer = ByteWriter(capacity: 12 + label.count + proto.count)
            writer.uint8(Self.openType)
            writer.uint8(open.channelType.byte)
            writer.uint16(open.priority)
            writer.uint32(open.reliabilityParameter)
            writer.uint16(UInt16(label.count))
            writer.uint16(UInt16(proto.count))
            var bytes = writer.bytes
            bytes.append(contentsOf: label)
            bytes.append(contentsOf: proto)
            return bytes
        }
    }
}
