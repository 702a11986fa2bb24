import FoundationEssentials
import Testing

@testable import RoomProtocol

/// The wire form of each message, as docs/PROTOCOL.md documents it.
@Suite struct MessageCodingTests {
    private func decode(_ json: String) throws(RoomProtocolError) -> ClientMessage {
        try ClientMessage(json: json)
    }

    /// A JSON text as a value, so two texts compare whatever their member order.
    private func value(_ json: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
    }

    @Test func decodesEveryClientMessageOfTheProtocol() throws {
        #expect(try decode(#"{"type":"join","token":"t.o.k"}"#) == .join(token: "t.o.k", mode: nil))
        #expect(try decode(#"{"type":"join","token":"t","mode":"mesh"}"#) == .join(token: "t", mode: .mesh))
        #expect(try decode(#"{"type":"publish","sdp":"v=0"}"#) == .publish(sdp: "v=0"))
        #expect(try decode(#"{"type":"subscriber-answer","sdp":"v=0","version":3}"#) == .subscriberAnswer(sdp: "v=0", version: 3))
        #expect(try decode(#"{"type":"unpublish","trackId":"TR_1"}"#) == .unpublish(trackID: "TR_1"))
        #expect(try decode(#"{"type":"subscribe","trackId":"TR_1"}"#) == .subscribe(trackID: "TR_1"))
        #expect(try decode(#"{"type":"unsubscribe","trackId":"TR_1"}"#) == .unsubscribe(trackID: "TR_1"))
        #expect(
            try decode(#"{"type":"set-preference","trackId":"TR_1","maxWidth":320}"#)
                == .setPreference(trackID: "TR_1", preference: ReceivePreference(maxWidth: 320)))
        #expect(
            try decode(#"{"type":"set-preference","trackId":"TR_1","maxLayer":1}"#)
                == .setPreference(trackID: "TR_1", preference: ReceivePreference(maxLayer: 1)))
        #expect(try decode(#"{"type":"mute","trackId":"TR_1","muted":true}"#) == .mute(trackID: "TR_1", muted: true))
        #expect(try decode(#"{"type":"leave"}"#) == .leave)
        #expect(try decode(#"{"type":"call","to":"PA_2"}"#) == .call(to: ParticipantID("PA_2")))
        #expect(try decode(#"{"type":"answer-call","callId":"CA_1"}"#) == .answerCall(CallID("CA_1")))
        #expect(try decode(#"{"type":"decline-call","callId":"CA_1"}"#) == .declineCall(CallID("CA_1")))
        #expect(try decode(#"{"type":"hangup","callId":"CA_1"}"#) == .hangup(CallID("CA_1")))
        #expect(
            try decode(
                #"{"type":"mesh-signal","to":"PA_2","payload":{"type":"candidate","candidate":"candidate:1 1 udp 1 127.0.0.1 5000 typ host","n":[1,true,null]}}"#
            )
                == .meshSignal(
                    to: ParticipantID("PA_2"),
                    payload: .object([
                        "type": .string("candidate"), "candidate": .string("candidate:1 1 udp 1 127.0.0.1 5000 typ host"),
                        "n": .array([.number(1), .bool(true), .null]),
                    ])))
        #expect(try decode(#"{"type":"ping"}"#) == .ping)
    }

    /// Each refusal names what is wrong: the server sends it back in
    /// `bad_request`, roombot counts it.
    @Test func rejectsUnknownOrIncompleteMessagesWithTypedErrors() {
        #expect(throws: RoomProtocolError.unknownType("dance")) { try decode(#"{"type":"dance"}"#) }
        #expect(throws: RoomProtocolError.missingKey("sdp")) { try decode(#"{"type":"publish"}"#) }
        #expect(throws: RoomProtocolError.missingKey("type")) { try decode(#"{"sdp":"v=0"}"#) }
        #expect(throws: RoomProtocolError.wrongType(path: "version")) {
            try decode(#"{"type":"subscriber-answer","sdp":"v=0","version":"3"}"#)
        }
        #expect(throws: RoomProtocolError.missingValue(path: "sdp")) { try decode(#"{"type":"publish","sdp":null}"#) }
        // Past Int: refused, not wrapped or trapped.
        #expect(throws: RoomProtocolError.self) {
            try decode(#"{"type":"subscriber-answer","sdp":"v=0","version":1e30}"#)
        }
        do throws(RoomProtocolError) {
            _ = try decode(#"{"type":"join","token":"t","mode":"p2p"}"#)
            Issue.record("an unknown mode decoded")
        } catch {
            if case .invalid = error {} else { Issue.record("\(error)") }
        }
        do throws(RoomProtocolError) {
            _ = try decode("not json")
            Issue.record("not JSON decoded")
        } catch {
            if case .invalid = error {} else { Issue.record("\(error)") }
        }
        #expect("\(RoomProtocolError.missingKey("sdp"))" == "missing 'sdp'")
        #expect("\(RoomProtocolError.unknownType("dance"))" == "unknown message type 'dance'")
    }

    @Test func encodesServerMessagesAsDocumented() throws {
        let a = ParticipantID("PA_1")
        let documented: [(ServerMessage, String)] = [
            (
                .joined(
                    participantID: a, room: "r", mode: .sfu,
                    participants: [
                        ParticipantInfo(
                            id: ParticipantID("PA_2"), identity: "bob",
                            tracks: [TrackInfo(id: "TR_1", kind: .video, layers: ["q", "h", "f"])])
                    ],
                    resumed: false),
                #"{"mode":"sfu","participantId":"PA_1","participants":[{"id":"PA_2","identity":"bob","tracks":[{"id":"TR_1","kind":"video","layers":["q","h","f"],"muted":false}]}],"resumed":false,"room":"r","type":"joined"}"#
            ),
            (
                .incomingCall(callID: CallID("CA_1"), from: a, identity: "alice"),
                #"{"callId":"CA_1","from":"PA_1","identity":"alice","type":"incoming-call"}"#
            ),
            (.error(code: .roomFull, message: "full"), #"{"code":"room_full","message":"full","type":"error"}"#),
            (
                .goingAway(reason: "shutdown", deadline: 1_700_000_000_123, seconds: 30),
                #"{"deadline":1700000000123,"reason":"shutdown","seconds":30,"type":"going-away"}"#
            ),
            (
                .callStarted(callID: CallID("CA_1"), room: "call/CA_1", peer: a, identity: "alice"),
                #"{"callId":"CA_1","identity":"alice","peer":"PA_1","room":"call/CA_1","type":"call-started"}"#
            ),
            (
                .callRinging(callID: CallID("CA_1"), to: a, identity: "alice"),
                #"{"callId":"CA_1","identity":"alice","to":"PA_1","type":"call-ringing"}"#
            ),
            (
                .activeSpeakers([SpeakerLevel(participantId: a, level: 0.5)]),
                #"{"speakers":[{"level":0.5,"participantId":"PA_1"}],"type":"active-speakers"}"#
            ),
            (
                .publisherLayers(
                    trackID: "TR_1", layers: [LayerActivity(rid: "q", active: true), LayerActivity(rid: "f", active: false)]),
                #"{"layers":[{"active":true,"rid":"q"},{"active":false,"rid":"f"}],"trackId":"TR_1","type":"publisher-layers"}"#
            ),
            (
                .streamState(trackID: "TR_1", state: .active, layer: 1, reason: .bandwidth),
                #"{"layer":1,"reason":"bandwidth","state":"active","trackId":"TR_1","type":"stream-state"}"#
            ),
            (
                .streamState(trackID: "TR_1", state: .paused, layer: nil, reason: .preference),
                #"{"reason":"preference","state":"paused","trackId":"TR_1","type":"stream-state"}"#
            ),
        ]
        for (message, text) in documented {
            let written = try message.json()
            #expect(try value(written) == value(text), "\(written)")
            // Slashes as they are: a room named `call/CA_1`.
            #expect(!written.contains(#"\/"#))
        }
    }

    /// `joined` with TURN on carries `iceServers` beside the message's own
    /// members (docs/PROTOCOL.md); other messages never do.
    @Test func joinedCarriesTheICEServersItIsSentWith() throws {
        let servers = [ICEServer(urls: ["turn:203.0.113.7:3478?transport=udp"], username: "1:alice", credential: "c")]
        let joined = ServerMessage.joined(
            participantID: ParticipantID("PA_1"), room: "r", mode: .sfu, participants: [], resumed: false)
        #expect(
            try value(joined.json(iceServers: servers))
                == value(
                    #"{"type":"joined","participantId":"PA_1","room":"r","mode":"sfu","participants":[],"resumed":false,"iceServers":[{"urls":["turn:203.0.113.7:3478?transport=udp"],"username":"1:alice","credential":"c"}]}"#
                ))
        #expect(try ServerMessage(json: joined.json(iceServers: servers)) == joined)
        #expect(try value(ServerMessage.pong.json(iceServers: servers)) == value(#"{"type":"pong"}"#))
    }
}
