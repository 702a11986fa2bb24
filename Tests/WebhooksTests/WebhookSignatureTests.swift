import RoomProtocol
import Rooms
import Signaling
import Testing

@testable import Webhooks

@Suite struct WebhookSignatureTests {
    let secret = "webhook-secret-0123456789"

    @Test func signsTheBodyHashAndVerifies() {
        let body = Array(#"{"event":"room_started"}"#.utf8)
        let header = WebhookSignature.authorization(body: body, key: "k1", secret: secret, nowSeconds: 1_700_000_000)
        #expect(
            WebhookSignature.problem(authorization: header, body: body, key: "k1", secret: secret, nowSeconds: 1_700_000_001)
                == nil)
        #expect(
            WebhookSignature.problem(
                authorization: header, body: body + [0x20], key: "k1", secret: secret, nowSeconds: 1_700_000_001)
                == "body hash differs")
        #expect(
            WebhookSignature.problem(
                authorization: header, body: body, key: "k1", secret: secret + "x", nowSeconds: 1_700_000_001)
                == "bad signature")
        #expect(
            WebhookSignature.problem(authorization: header, body: body, key: "k1", secret: secret, nowSeconds: 1_700_001_000)
                == "expired or not valid yet")
    }

    @Test func eventJSONHasIdTypeTimeRoomAndFields() {
        let alice = ParticipantInfo(id: ParticipantID("PA_1"), identity: "alice")
        let event = WebhookEvent(
            .trackPublished(room: "r", participant: alice, track: TrackInfo(id: "TR_1", kind: .audio)), id: "EV_1",
            createdAt: 1_700_000_000.5)
        let json = String(decoding: event.jsonBytes(), as: UTF8.self)
        #expect(
            json
                == #"{"createdAt":1700000000.5,"event":"track_published","id":"EV_1","participant":{"id":"PA_1","identity":"alice","tracks":[]},"room":"r","track":{"id":"TR_1","kind":"audio","layers":[],"muted":false}}"#
        )
        let recording = WebhookEvent.recordingFinished(
            room: "r", recording: .init(id: "RE_1", files: ["/rec/a.webm"], durationSeconds: 10, status: "stopped"), id: "EV_2",
            createdAt: 1)
        #expect(String(decoding: recording.jsonBytes(), as: UTF8.self).contains(#""event":"recording_finished""#))
    }
}
