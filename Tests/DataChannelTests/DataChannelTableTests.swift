import Testing

@testable import DataChannel

@Test func acknowledgesAPeerOpenAndThenReadsItsMessages() throws {
    var table = DataChannelTable(role: .dtlsServer, streams: 16, maximumChannels: 4)
    let input = try table.receive(stream: 0, ppid: 50, payload: chromiumOpenChat)
    guard case .opened(let channel, let acknowledgement) = input else { Issue.record("\(input)"); return }
    #expect(channel.label == "chat" && channel.stream == 0 && acknowledgement == [0x02])
    #expect(
        try table.receive(stream: 0, ppid: 51, payload: Array("hi".utf8))
            == .message(stream: 0, isText: true, payload: Array("hi".utf8)))
    #expect(try table.receive(stream: 0, ppid: 53, payload: [1]) == .message(stream: 0, isText: false, payload: [1]))
    #expect(try table.receive(stream: 0, ppid: 56, payload: [0]) == .message(stream: 0, isText: true, payload: []))
}

@Test func refusesWhatTheRFCsForbidOrOurBoundsDoNotAllow() throws {
    var table = DataChannelTable(role: .dtlsServer, streams: 8, maximumChannels: 2)
    #expect(throws: DataChannelTable.InputError.unknownStream(0)) { try table.receive(stream: 0, ppid: 51, payload: [1]) }
    #expect(throws: DataChannelTable.InputError.wrongStreamParity(1)) {
        try table.receive(stream: 1, ppid: 50, payload: chromiumOpenChat)
    }
    #expect(throws: DataChannelTable.InputError.streamOutOfRange(8)) {
        try table.receive(stream: 8, ppid: 50, payload: chromiumOpenChat)
    }
    _ = try table.receive(stream: 0, ppid: 50, payload: chromiumOpenChat)
    #expect(throws: DataChannelTable.InputError.streamInUse(0)) {
        try table.receive(stream: 0, ppid: 50, payload: chromiumOpenChat)
    }
    #expect(throws: DataChannelTable.InputError.unknownPayloadProtocol(52)) {
        try table.receive(stream: 0, ppid: 52, payload: [1])
    }
    #expect(throws: DataChannelTable.InputError.malformedDCEP(.empty)) { try table.receive(stream: 2, ppid: 50, payload: []) }
    _ = try table.receive(stream: 2, ppid: 50, payload: chromiumOpenChat)
    #expect(throws: DataChannelTable.InputError.tooManyChannels(limit: 2)) {
        try table.receive(stream: 4, ppid: 50, payload: chromiumOpenChat)
    }
    let refused = table.open(label: "x", channelType: .init(policy: .reliable, unordered: false))
    #expect(refused == nil)
}

@Test func opensOurChannelsOnOurParityAndTakesTheAck() throws {
    var table = DataChannelTable(role: .dtlsServer, streams: 8, maximumChannels: 4)
    let maybeOpened = table.open(label: "swiftlet", channelType: .init(policy: .reliable, unordered: false))
    let opened = try #require(maybeOpened)
    #expect(opened.0.stream == 1 && opened.0.awaitingAcknowledgement)
    #expect(
        try DataChannelMessage.parse(opened.openMessage)
            == .open(DataChannelOpen(channelType: .init(policy: .reliable, unordered: false), label: "swiftlet")))
    #expect(try table.receive(stream: 1, ppid: 50, payload: [0x02]) == .acknowledged(stream: 1))
    #expect(table.channels[1]?.awaitingAcknowledgement == false)
    let second = table.open(label: "b", channelType: .init(policy: .reliable, unordered: true))
    #expect(second?.0.stream == 3)
    #expect(table.close(stream: 1)?.label == "swiftlet")
}

@Test func emptyMessagesTravelAsOneZeroByteWithTheEmptyPPID() {
    #expect(DataChannelTable.userMessage(isText: true, payload: []) == (56, [0]))
    #expect(DataChannelTable.userMessage(isText: false, payload: []) == (57, [0]))
    #expect(DataChannelTable.userMessage(isText: true, payload: [65]) == (51, [65]))
}
