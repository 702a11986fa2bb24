import Foundation
import Testing

@testable import Rooms

@Suite struct MessageCodingTests {
    private func decode(_ json: String) throws -> ClientMessage {
        try JSONDecoder().decode(ClientMessage.self, from: Data(json.utf8))
    }

    private func encode(_ m: ServerMessage) throws -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try e.encode(m), as: UTF8.self)
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

    @Test func rejectsUnknownOrIncompleteMessages() {
        #expect(throws: DecodingError.self) { try decode(#"{"type":"dance"}"#) }
        #expect(throws: DecodingError.self) { try decode(#"{"type":"publish"}"#) }
        #expect(throws: DecodingError.self) { try decode(#"{"sdp":"v=0"}"#) }
        #expect(throws: DecodingError.self) { try decode(#"{"type":"join","token":"t","mode":"p2p"}"#) }
        #expect(throws: (any Error).self) { try decode("not json") }
    }

    @Test func encodesServerMessagesAsDocumented() throws {
        let a = ParticipantID("PA_1")
        #expect(
            try encode(
                .joined(
                    participantID: a, room: "r", mode: .sfu,
                    participants: [
                        ParticipantInfo(
                            id: ParticipantID("PA_2"), identity: "bob",
                            tracks: [TrackInfo(id: "TR_1", kind: .video, layers: ["q", "h", "f"])])
                    ],
                    resumed: false))
                == #"{"mode":"sfu","participantId":"PA_1","participants":[{"id":"PA_2","identity":"bob","tracks":[{"id":"TR_1","kind":"video","layers":["q","h","f"],"muted":false}]}],"resumed":false,"room":"r","type":"joined"}"#
        )
        #expect(
            try encode(.incomingCall(callID: CallID("CA_1"), from: a, identity: "alice"))
                == #"{"callId":"CA_1","from":"PA_1","identity":"alice","type":"incoming-call"}"#)
        #expect(try encode(.error(code: .roomFull, message: "full")) == #"{"code":"room_full","message":"full","type":"error"}"#)
        #expect(
            try encode(.goingAway(reason: "shutdown", deadline: 1_700_000_000_123, seconds: 30))
                == #"{"deadline":1700000000123,"reason":"shutdown","seconds":30,"type":"going-away"}"#)
        #expect(
            try encode(.callStarted(callID: CallID("CA_1"), room: "call/CA_1", peer: a, identity: "alice"))
                == #"{"callId":"CA_1","identity":"alice","peer":"PA_1","room":"call/CA_1","type":"call-started"}"#)
        #expect(
            try encode(.callRinging(callID: CallID("CA_1"), to: a, identity: "alice"))
                == #"{"callId":"CA_1","identity":"alice","to":"PA_1","type":"call-ringing"}"#)
        #expect(
            try encode(.activeSpeakers([SpeakerLevel(participantId: a, level: 0.5)]))
                == #"{"speakers":[{"level":0.5,"participantId":"PA_1"}],"type":"active-speakers"}"#)
        #expect(
            try encode(
                .publisherLayers(
                    trackID: "TR_1", layers: [LayerActivity(rid: "q", active: true), LayerActivity(rid: "f", active: false)]))
                == #"{"layers":[{"active":true,"rid":"q"},{"active":false,"rid":"f"}],"trackId":"TR_1","type":"publisher-layers"}"#
        )
        #expect(
            try encode(.streamState(trackID: "TR_1", state: .active, layer: 1, reason: .bandwidth))
                == #"{"layer":1,"reason":"bandwidth","state":"active","trackId":"TR_1","type":"stream-state"}"#)
        #expect(
            try encode(.streamState(trackID: "TR_1", state: .paused, layer: nil, reason: .preference))
                == #"{"reason":"preference","state":"paused","trackId":"TR_1","type":"stream-state"}"#)
    }

    @Test func serverMessagesRoundTrip() throws {
        let all: [ServerMessage] = [
            .participantJoined(ParticipantInfo(id: ParticipantID("PA_3"), identity: "c")),
            .participantLeft(ParticipantID("PA_3")),
            .trackPublished(participantID: ParticipantID("PA_3"), track: TrackInfo(id: "TR_2", kind: .audio)),
            .trackUnpublished(participantID: ParticipantID("PA_3"), trackID: "TR_2"),
            .trackMuted(participantID: ParticipantID("PA_3"), trackID: "TR_2", muted: true),
            .publishAnswer(sdp: "v=0", tracks: [OwnTrack(id: "TR_1", kind: .video, mid: "1")]),
            .subscriberOffer(sdp: "v=0", version: 2), .callDeclined(callID: CallID("CA_9")),
            .callEnded(callID: CallID("CA_9"), reason: "hangup"), .meshSignal(from: ParticipantID("PA_3"), payload: .string("x")),
            .pong, .callRinging(callID: CallID("CA_9"), to: ParticipantID("PA_4"), identity: "dan"),
            .callStarted(callID: CallID("CA_9"), room: "call/CA_9", peer: ParticipantID("PA_4"), identity: "dan"),
            .activeSpeakers([]),
            .publisherLayers(trackID: "TR_2", layers: [LayerActivity(rid: "h", active: true)]),
            .streamState(trackID: "TR_2", state: .paused, layer: nil, reason: .bandwidth),
            .goingAway(reason: "shutdown", deadline: 1_700_000_000_123, seconds: 30),
        ]
        for m in all {
            let data = try JSONEncoder().encode(m)
            #expect(try JSONDecoder().decode(ServerMessage.self, from: data) == m)
        }
    }
}
