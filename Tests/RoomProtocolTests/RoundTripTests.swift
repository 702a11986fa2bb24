import Testing

@testable import RoomProtocol

/// Both directions of each message: what one side writes, the other
/// reads back equal. The server reads `ClientMessage` and writes
/// `ServerMessage`; roombot the reverse.
@Suite struct RoundTripTests {
    static let a = ParticipantID("PA_Jd7a0QpLx2Zc")
    static let b = ParticipantID("PA_k2Vq9s81HbTe")
    static let call = CallID("CA_7Ch2Kd0Lq1Wz")
    static let sdp = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n"
    static let payload = JSONValue.object([
        "type": .string("candidate"), "candidate": .string("candidate:1 1 udp 2122260223 192.0.2.1 5000 typ host"),
        "sdpMid": .string("0"), "sdpMLineIndex": .number(0), "usernameFragment": .null,
        "nested": .array([.bool(true), .number(-1.5e-3), .string("\"quoted\" \\ / é 🎥"), .object([:]), .array([])]),
    ])

    /// One of each case; `typeName` proves none is missing.
    static let clientMessages: [ClientMessage] = [
        .join(token: "h.p.s", mode: nil), .join(token: "h.p.s", mode: .mesh), .join(token: "t", mode: .sfu),
        .publish(sdp: sdp), .subscriberAnswer(sdp: sdp, version: 7), .unpublish(trackID: "TR_1"),
        .subscribe(trackID: "TR_1"), .unsubscribe(trackID: "TR_1"),
        .setPreference(trackID: "TR_1", preference: ReceivePreference(maxWidth: 640)),
        .setPreference(trackID: "TR_1", preference: ReceivePreference(maxLayer: 0)),
        .setPreference(trackID: "TR_1", preference: ReceivePreference(maxWidth: 0, maxLayer: -1)),
        .setPreference(trackID: "TR_1", preference: ReceivePreference()), .mute(trackID: "TR_1", muted: true),
        .mute(trackID: "TR_1", muted: false), .leave, .call(to: b), .answerCall(call), .declineCall(call), .hangup(call),
        .meshSignal(to: b, payload: payload), .meshSignal(to: b, payload: .null), .ping,
    ]

    static let serverMessages: [ServerMessage] = [
        .joined(
            participantID: a, room: "demo", mode: .sfu,
            participants: [
                ParticipantInfo(
                    id: b, identity: "bob",
                    tracks: [
                        TrackInfo(id: "TR_1", kind: .video, muted: false, layers: ["q", "h", "f"]),
                        TrackInfo(id: "TR_2", kind: .audio, muted: true),
                    ]),
                ParticipantInfo(id: ParticipantID("PA_3"), identity: "carol"),
            ],
            resumed: false),
        .joined(participantID: a, room: "mesh/1", mode: .mesh, participants: [], resumed: true),
        .participantJoined(ParticipantInfo(id: b, identity: "bob", tracks: [TrackInfo(id: "TR_2", kind: .audio)])),
        .participantLeft(b), .trackPublished(participantID: b, track: TrackInfo(id: "TR_1", kind: .video, layers: ["q"])),
        .trackUnpublished(participantID: b, trackID: "TR_1"), .trackMuted(participantID: b, trackID: "TR_1", muted: true),
        .participantUpdated(ParticipantInfo(id: b, identity: "bob", metadata: "{\"hand\":true}")),
        .publishAnswer(
            sdp: sdp, tracks: [OwnTrack(id: "TR_1", kind: .video, mid: "1"), OwnTrack(id: "TR_2", kind: .audio, mid: "0")]),
        .publishAnswer(sdp: sdp, tracks: []), .subscriberOffer(sdp: sdp, version: 3),
        .incomingCall(callID: call, from: a, identity: "alice"), .callRinging(callID: call, to: b, identity: "bob"),
        .callStarted(callID: call, room: "call/CA_7Ch2Kd0Lq1Wz", peer: b, identity: "bob"), .callDeclined(callID: call),
        .callEnded(callID: call, reason: "hangup"), .meshSignal(from: a, payload: payload),
        .activeSpeakers([SpeakerLevel(participantId: b, level: 0.71), SpeakerLevel(participantId: a, level: 0)]),
        .activeSpeakers([]),
        .publisherLayers(
            trackID: "TR_1",
            layers: [
                LayerActivity(rid: "q", active: true), LayerActivity(rid: "h", active: true),
                LayerActivity(rid: "f", active: false),
            ]),
        .streamState(trackID: "TR_1", state: .active, layer: 2, reason: .bandwidth),
        .streamState(trackID: "TR_1", state: .paused, layer: nil, reason: .preference),
        .streamState(trackID: "TR_1", state: .active, layer: 0, reason: .publisher),
        .goingAway(reason: "server shutting down", deadline: 1_767_225_600_000, seconds: 30),
        .error(code: .badRequest, message: "not a room protocol message: missing 'sdp'"),
        .error(code: .tooManySubscriptions, message: "limit"), .pong,
    ]

    @Test func everyClientMessageRoundTripsBothWays() throws {
        #expect(Set(Self.clientMessages.map(\.typeName)).count == 15)
        for message in Self.clientMessages {
            // roombot writes, the server reads...
            let text = try message.json()
            #expect(try ClientMessage(json: text) == message, "\(text)")
            // ...and the text has the message's own type.
            #expect(text.contains(#""type":"\#(message.typeName)""#))
        }
    }

    @Test func everyServerMessageRoundTripsBothWays() throws {
        #expect(Set(Self.serverMessages.map(\.typeName)).count == 21)
        for message in Self.serverMessages {
            // The server writes, roombot reads.
            let text = try message.json()
            #expect(try ServerMessage(json: text) == message, "\(text)")
            #expect(text.contains(#""type":"\#(message.typeName)""#))
            #expect(try ServerMessage(json: String(decoding: message.jsonBytes(), as: UTF8.self)) == message)
        }
    }

    /// Each side reads only its peer's messages: a server message is no
    /// client message, except where both have the type (`mesh-signal`),
    /// whose members differ (`to`, `from`).
    @Test func aMessageOfTheOtherDirectionIsRefused() throws {
        for message in Self.serverMessages {
            #expect(throws: RoomProtocolError.self, "\(message.typeName)") { try ClientMessage(json: message.json()) }
        }
        for message in Self.clientMessages {
            #expect(throws: RoomProtocolError.self, "\(message.typeName)") { try ServerMessage(json: message.json()) }
        }
    }

    /// A number JSON cannot carry fails the encoder with a typed error, not
    /// a trap or invalid JSON on the wire.
    @Test func aNonFiniteNumberIsUnencodable() {
        #expect {
            try ClientMessage.meshSignal(to: Self.b, payload: .array([.number(.nan)])).json()
        } throws: { error in
            if case .unencodable = error as? RoomProtocolError { true } else { false }
        }
        #expect(throws: RoomProtocolError.self) {
            try ServerMessage.activeSpeakers([SpeakerLevel(participantId: Self.a, level: .infinity)]).json()
        }
    }
}
