/// The small envelope of relayed data channel messages (docs/PROTOCOL.md
/// "Data channels"), the same for string and binary messages.
///
/// From a client: the message as it is goes to every other participant of
/// the room; a message whose first byte is `@` names its recipients:
/// `@alice,bob\n` then the message (`@\n` names nobody: everyone, which is
/// how a message starting with `@` is sent to all).
///
/// To a client: the sender's identity, a newline, then the message, on the
/// receiver's channel with the label the sender used.
package enum DataMessageEnvelope {
    /// At most this many bytes of recipients before the newline.
    package static let maximumAddressBytes = 1024
    /// At most this many named recipients.
    package static let maximumRecipients = 32

    package enum ParseError: Error, Equatable, Sendable {
        /// `@` with no newline within `maximumAddressBytes`.
        case unterminatedAddress
        case tooManyRecipients(limit: Int)
        case invalidUTF8
    }

    /// The recipients (empty: everyone) and the message.
    package static func parse(_ payload: [UInt8]) throws(ParseError) -> (recipients: [String], body: ArraySlice<UInt8>) {
        guard payload.first == UInt8(ascii: "@") else { return ([], payload[...]) }
        let searched = payload.prefix(maximumAddressBytes + 1)
        guard let newline = searched.firstIndex(of: 0x0A) else { throw .unterminatedAddress }
        guard let text = String(validating: payload[1..<newline], as: UTF8.self) else { throw .invalidUTF8 }
        let names = text.split(separator: ",", omittingEmptySubsequences: true).map(String.init)
        guard names.count <= maximumRecipients else { throw .tooManyRecipients(limit: maximumRecipients) }
        return (names, payload[(newline + 1)...])
    }

    /// What receivers get: the sender's identity, `\n`, the message.
    package static func relayed(from identity: String, body: ArraySlice<UInt8>) -> [UInt8] {
        var bytes = Array(identity.utf8)
        bytes.reserveCapacity(bytes.count + 1 + body.count)
        bytes.append(0x0A)
        bytes.append(contentsOf: body)
        return bytes
    }
}
