import Testing

@testable import DataChannel

/// DATA_CHANNEL_OPEN as Chromium sends it for `createDataChannel("chat")`,
/// annotated field by field (RFC 8832 section 5.1).
let chromiumOpenChat: [UInt8] = [
    0x03,  // Message Type: DATA_CHANNEL_OPEN
    0x00,  // Channel Type: DATA_CHANNEL_RELIABLE
    0x01, 0x00,  // Priority: 256
    0x00, 0x00, 0x00, 0x00,  // Reliability Parameter
    0x00, 0x04,  // Label Length
    0x00, 0x00,  // Protocol Length
    0x63, 0x68, 0x61, 0x74,  // "chat"
]

@Test func parsesAReliableOpen() throws {
    let message = try DataChannelMessage.parse(chromiumOpenChat)
    #expect(message == .open(DataChannelOpen(channelType: .init(policy: .reliable, unordered: false), label: "chat")))
    #expect(message.serialized == chromiumOpenChat)
}

@Test func parsesAnUnorderedNoRetransmitOpenWithAProtocol() throws {
    let open = DataChannelOpen(
        channelType: .init(policy: .partialReliableRetransmit, unordered: true), priority: 512,
        reliabilityParameter: 0, label: "state", protocol: "json")
    let bytes = DataChannelMessage.open(open).serialized
    #expect(bytes[1] == 0x81)
    #expect(try DataChannelMessage.parse(bytes) == .open(open))
}

@Test func parsesAnAck() throws {
    #expect(try DataChannelMessage.parse([0x02]) == .ack)
}

@Test func refusesMalformedMessagesWithTypedErrors() {
    #expect(throws: DataChannelMessageError.empty) { try DataChannelMessage.parse([]) }
    #expect(throws: DataChannelMessageError.unknownMessageType(0x04)) { try DataChannelMessage.parse([0x04]) }
    #expect(throws: DataChannelMessageError.trailingBytes) { try DataChannelMessage.parse([0x02, 0x00]) }
    #expect(throws: DataChannelMessageError.truncated) { try DataChannelMessage.parse(Array(chromiumOpenChat.prefix(15))) }
    #expect(throws: DataChannelMessageError.trailingBytes) { try DataChannelMessage.parse(chromiumOpenChat + [0]) }
    var badType = chromiumOpenChat
    badType[1] = 0x03
    #expect(throws: DataChannelMessageError.unknownChannelType(0x03)) { try DataChannelMessage.parse(badType) }
    var longLabel = chromiumOpenChat
    longLabel[8] = 0xFF
    #expect(throws: DataChannelMessageError.textTooLong(0xFF04)) { try DataChannelMessage.parse(longLabel) }
    var badUTF8 = chromiumOpenChat
    badUTF8[12] = 0xC3
    #expect(throws: DataChannelMessageError.invalidUTF8) { try DataChannelMessage.parse(badUTF8) }
}
