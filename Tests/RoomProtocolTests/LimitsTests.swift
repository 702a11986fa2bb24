import Testing

@testable import RoomProtocol

/// Every count and length of a message is bounded before the JSON decoder
/// builds anything, in both directions (docs/SECURITY.md).
@Suite struct LimitsTests {
    private func nested(_ depth: Int) -> String {
        #"{"type":"mesh-signal","from":"PA_1","payload":"# + String(repeating: "[", count: depth - 1)
            + String(repeating: "]", count: depth - 1) + "}"
    }

    @Test func theStandardLimitsAreTheWebSocketMessageAndTheLargestRoom() {
        #expect(RoomProtocolLimits.standard.messageBytes == 1024 * 1024)
        #expect(RoomProtocolLimits.standard.depth == 32)
        #expect(RoomProtocolLimits.standard.entries == 100_000)
    }

    @Test func aMessageOverTheByteLimitIsRefusedUnread() throws {
        let limits = RoomProtocolLimits(messageBytes: 64)
        let fits = #"{"type":"publish","sdp":""# + String(repeating: "a", count: 64 - 27) + #""}"#
        #expect(fits.utf8.count == 64)
        #expect(try ClientMessage(json: fits, limits: limits) == .publish(sdp: String(repeating: "a", count: 37)))
        #expect(throws: RoomProtocolError.tooLarge(limit: 64)) { try ClientMessage(json: fits + " ", limits: limits) }
        // Bytes, not characters.
        let wide = #"{"type":"publish","sdp":""# + String(repeating: "é", count: 19) + #""}"#
        #expect(throws: RoomProtocolError.tooLarge(limit: 64)) { try ClientMessage(json: wide, limits: limits) }
        let big = #"{"type":"subscriber-offer","version":1,"sdp":""# + String(repeating: "a", count: 1024 * 1024) + #""}"#
        #expect(throws: RoomProtocolError.tooLarge(limit: 1024 * 1024)) { try ServerMessage(json: big) }
    }

    @Test func nestingDeeperThanTheLimitIsRefused() throws {
        let limits = RoomProtocolLimits(depth: 5)
        #expect(
            try ServerMessage(json: nested(5), limits: limits)
                == .meshSignal(from: ParticipantID("PA_1"), payload: .array([.array([.array([.array([])])])])))
        #expect(throws: RoomProtocolError.tooDeep(limit: 5)) { try ServerMessage(json: nested(6), limits: limits) }
        #expect(throws: RoomProtocolError.tooDeep(limit: 32)) { try ServerMessage(json: nested(10_000)) }
        // Brackets inside strings, escaped quotes among them, are text.
        let quoted = #"{"type":"publish","sdp":"[[[[{{{{\"[[[[\\"}"#
        #expect(try ClientMessage(json: quoted, limits: RoomProtocolLimits(depth: 1)) == .publish(sdp: #"[[[[{{{{"[[[[\"#))
    }

    @Test func moreEntriesThanTheLimitAreRefused() throws {
        let limits = RoomProtocolLimits(entries: 4)
        func speakers(_ n: Int) -> String {
            #"{"type":"active-speakers","speakers":["#
                + Array(repeating: #"{"participantId":"PA_1","level":0.5}"#, count: n).joined(separator: ",") + "]}"
        }
        #expect(
            try ServerMessage(json: speakers(4), limits: limits)
                == .activeSpeakers(Array(repeating: SpeakerLevel(participantId: ParticipantID("PA_1"), level: 0.5), count: 4)))
        #expect(throws: RoomProtocolError.tooManyEntries(limit: 4)) { try ServerMessage(json: speakers(5), limits: limits) }
        // Members of an object count too (the envelope has 2 here).
        let members = #"{"type":"leave","a":1,"b":2,"c":3}"#
        #expect(try ClientMessage(json: members, limits: limits) == .leave)
        #expect(throws: RoomProtocolError.tooManyEntries(limit: 4)) {
            try ClientMessage(json: #"{"type":"leave","a":1,"b":2,"c":3,"d":4}"#, limits: limits)
        }
        // Commas inside strings are text.
        #expect(try ClientMessage(json: #"{"type":"publish","sdp":",,,,,,,,"}"#, limits: limits) == .publish(sdp: ",,,,,,,,"))
    }

    /// Malformed text passes the scan and is the decoder's to refuse: a
    /// typed error either way, never a trap.
    @Test func unbalancedTextIsATypedError() {
        for text in ["]]]]", "}{", "[", #"{"type":"#, #"{"type":"leave"}}}]"#, "\"", #"{"type":"leave","x":"\"#, ""] {
            #expect(throws: RoomProtocolError.self, "\(text)") { try ClientMessage(json: text) }
            #expect(throws: RoomProtocolError.self, "\(text)") { try ServerMessage(json: text) }
        }
    }
}
