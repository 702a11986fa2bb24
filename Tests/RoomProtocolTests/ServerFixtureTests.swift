import Testing

@testable import RoomProtocol

/// What roombot reads: the server's messages as docs/PROTOCOL.md shows
/// them (spaces, line breaks, member order and all), decoded to the
/// values the server encodes them from.
@Suite struct ServerFixtureTests {
    static let alice = ParticipantID("PA_Jd7a0QpLx2Zc")
    static let bob = ParticipantID("PA_k2Vq9s81HbTe")
    static let call = CallID("CA_7Ch2Kd0Lq1Wz")

    static let fixtures: [(String, ServerMessage)] = [
        (
            #"{"type": "error", "code": "forbidden", "message": "token expired"}"#,
            .error(code: .forbidden, message: "token expired")
        ),
        (
            """
            {"type": "joined", "participantId": "PA_Jd7a0QpLx2Zc", "room": "demo", "mode": "sfu", "resumed": false,
             "participants": [{"id": "PA_k2Vq9s81HbTe", "identity": "bob",
                               "tracks": [{"id": "TR_Q0aP3mZy7LrB", "kind": "video", "layers": ["q", "h", "f"], "muted": false}]}]}
            """,
            .joined(
                participantID: alice, room: "demo", mode: .sfu,
                participants: [
                    ParticipantInfo(
                        id: bob, identity: "bob",
                        tracks: [TrackInfo(id: "TR_Q0aP3mZy7LrB", kind: .video, layers: ["q", "h", "f"])])
                ], resumed: false)
        ),
        (
            """
            {"type": "joined", "participantId": "PA_Jd7a0QpLx2Zc", "room": "demo", "mode": "sfu", "resumed": false, "participants": [],
             "iceServers": [{"urls": ["turn:203.0.113.7:3478?transport=udp", "turn:203.0.113.7:3478?transport=tcp",
                                      "turns:turn.example.com:443?transport=tcp"],
                             "username": "1767225600:alice", "credential": "gZLHrtMkaGRBf4raXY16rIvKzvs="}]}
            """,
            .joined(participantID: alice, room: "demo", mode: .sfu, participants: [], resumed: false)
        ),
        (
            #"{"type": "participant-joined", "participant": {"id": "PA_Jd7a0QpLx2Zc", "identity": "alice", "tracks": []}}"#,
            .participantJoined(ParticipantInfo(id: alice, identity: "alice"))
        ),
        (#"{"type": "participant-left", "participantId": "PA_Jd7a0QpLx2Zc"}"#, .participantLeft(alice)),
        (
            #"{"type": "going-away", "reason": "server shutting down", "deadline": 1767225600000, "seconds": 30}"#,
            .goingAway(reason: "server shutting down", deadline: 1_767_225_600_000, seconds: 30)
        ),
        (
            #"""
            {"type": "publish-answer", "sdp": "v=0\r\no=- 1393622318465572864 1 IN IP4 0.0.0.0\r\n…a=ice-lite\r\n…",
             "tracks": [{"id": "TR_Q0aP3mZy7LrB", "kind": "video", "mid": "1"}]}
            """#,
            .publishAnswer(
                sdp: "v=0\r\no=- 1393622318465572864 1 IN IP4 0.0.0.0\r\n…a=ice-lite\r\n…",
                tracks: [OwnTrack(id: "TR_Q0aP3mZy7LrB", kind: .video, mid: "1")])
        ),
        (
            #"""
            {"type": "track-published", "participantId": "PA_k2Vq9s81HbTe",
             "track": {"id": "TR_Q0aP3mZy7LrB", "kind": "video", "layers": ["q", "h", "f"], "muted": false}}
            """#,
            .trackPublished(participantID: bob, track: TrackInfo(id: "TR_Q0aP3mZy7LrB", kind: .video, layers: ["q", "h", "f"]))
        ),
        (
            #"{"type": "track-unpublished", "participantId": "PA_k2Vq9s81HbTe", "trackId": "TR_Q0aP3mZy7LrB"}"#,
            .trackUnpublished(participantID: bob, trackID: "TR_Q0aP3mZy7LrB")
        ),
        (
            #"{"type": "track-muted", "participantId": "PA_k2Vq9s81HbTe", "trackId": "TR_Q0aP3mZy7LrB", "muted": true}"#,
            .trackMuted(participantID: bob, trackID: "TR_Q0aP3mZy7LrB", muted: true)
        ),
        (
            #"{"type": "subscriber-offer", "version": 3, "sdp": "v=0\r\no=- 1393622318465572865 3 IN IP4 0.0.0.0\r\n…"}"#,
            .subscriberOffer(sdp: "v=0\r\no=- 1393622318465572865 3 IN IP4 0.0.0.0\r\n…", version: 3)
        ),
        (
            #"{"type": "stream-state", "trackId": "TR_Q0aP3mZy7LrB", "state": "active", "layer": 1, "reason": "bandwidth"}"#,
            .streamState(trackID: "TR_Q0aP3mZy7LrB", state: .active, layer: 1, reason: .bandwidth)
        ),
        (
            #"{"type": "stream-state", "trackId": "TR_Q0aP3mZy7LrB", "state": "paused", "reason": "bandwidth"}"#,
            .streamState(trackID: "TR_Q0aP3mZy7LrB", state: .paused, layer: nil, reason: .bandwidth)
        ),
        (
            #"""
            {"type": "publisher-layers", "trackId": "TR_Q0aP3mZy7LrB",
             "layers": [{"rid": "q", "active": true}, {"rid": "h", "active": true}, {"rid": "f", "active": false}]}
            """#,
            .publisherLayers(
                trackID: "TR_Q0aP3mZy7LrB",
                layers: [
                    LayerActivity(rid: "q", active: true), LayerActivity(rid: "h", active: true),
                    LayerActivity(rid: "f", active: false),
                ])
        ),
        (
            #"{"type": "active-speakers", "speakers": [{"participantId": "PA_k2Vq9s81HbTe", "level": 0.71}]}"#,
            .activeSpeakers([SpeakerLevel(participantId: bob, level: 0.71)])
        ),
        (
            #"{"type": "call-ringing", "callId": "CA_7Ch2Kd0Lq1Wz", "to": "PA_k2Vq9s81HbTe", "identity": "bob"}"#,
            .callRinging(callID: call, to: bob, identity: "bob")
        ),
        (
            #"{"type": "incoming-call", "callId": "CA_7Ch2Kd0Lq1Wz", "from": "PA_Jd7a0QpLx2Zc", "identity": "alice"}"#,
            .incomingCall(callID: call, from: alice, identity: "alice")
        ),
        (
            #"{"type": "call-started", "callId": "CA_7Ch2Kd0Lq1Wz", "room": "call/CA_7Ch2Kd0Lq1Wz", "peer": "PA_k2Vq9s81HbTe", "identity": "bob"}"#,
            .callStarted(callID: call, room: "call/CA_7Ch2Kd0Lq1Wz", peer: bob, identity: "bob")
        ),
        (#"{"type": "call-declined", "callId": "CA_7Ch2Kd0Lq1Wz"}"#, .callDeclined(callID: call)),
        (
            #"{"type": "call-ended", "callId": "CA_7Ch2Kd0Lq1Wz", "reason": "hangup"}"#,
            .callEnded(callID: call, reason: "hangup")
        ),
        (
            #"{"type": "mesh-signal", "from": "PA_Jd7a0QpLx2Zc", "payload": {"type": "offer", "sdp": "v=0\r\n…"}}"#,
            .meshSignal(from: alice, payload: .object(["type": .string("offer"), "sdp": .string("v=0\r\n…")]))
        ),
        (#"{"type":"pong"}"#, .pong),
    ]

    @Test(arguments: fixtures.indices) func decodesWhatTheServerSends(_ index: Int) throws {
        let (text, expected) = Self.fixtures[index]
        #expect(try ServerMessage(json: text) == expected)
    }

    /// The client's messages of docs/PROTOCOL.md, as the server reads them.
    @Test func decodesTheDocumentedClientMessages() throws {
        let fixtures: [(String, ClientMessage)] = [
            (
                #"{"type": "join", "token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ…", "mode": "sfu"}"#,
                .join(token: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ…", mode: .sfu)
            ),
            (
                #"{"type": "subscriber-answer", "version": 3, "sdp": "v=0\r\n…a=setup:active\r\n…"}"#,
                .subscriberAnswer(sdp: "v=0\r\n…a=setup:active\r\n…", version: 3)
            ),
            (
                #"{"type": "set-preference", "trackId": "TR_Q0aP3mZy7LrB", "maxWidth": 640}"#,
                .setPreference(trackID: "TR_Q0aP3mZy7LrB", preference: ReceivePreference(maxWidth: 640))
            ),
            (
                #"{"type": "set-preference", "trackId": "TR_Q0aP3mZy7LrB", "maxLayer": 1}"#,
                .setPreference(trackID: "TR_Q0aP3mZy7LrB", preference: ReceivePreference(maxLayer: 1))
            ),
            (
                #"{"type": "mesh-signal", "to": "PA_k2Vq9s81HbTe", "payload": {"type": "offer", "sdp": "v=0\r\n…"}}"#,
                .meshSignal(to: Self.bob, payload: .object(["type": .string("offer"), "sdp": .string("v=0\r\n…")]))
            ),
        ]
        for (text, expected) in fixtures { #expect(try ClientMessage(json: text) == expected) }
    }
}
