import DTLS
import Foundation
import MediaRecorder
import MediaWorker
import NetIO
import RoomProtocol
import Rooms
import Signaling
import SignalingServer
import Synchronization
import Testing

@testable import SwiftletServer

/// Recording started and stopped through the server API (docs/API.md,
/// docs/RECORDING.md): an in-process server (media plane, signalling,
/// recorder wired as `swiftlet serve` wires them), a real roombot
/// publisher and curl. Debug build only, with the other recording
/// process tests.
extension RecordingProcessTests {
    final class Finished: Sendable {
        let events = Mutex<[RecordingFinished]>([])
    }

    @Test(.timeLimit(.minutes(1)))
    func startRecordingOnALiveRoomWaitsForAKeyframeAndStopRecordingClosesTheFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-rec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let certificate = try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970))
        let media = try MediaPlane(count: 1, bindIP: "127.0.0.1", firstPort: 0, certificate: certificate)
        let finished = Finished()
        let recorder = Recorder(
            options: RecorderOptions(directory: dir.path), media: media, identity: { _ in nil },
            onFinished: { event in finished.events.withLock { $0.append(event) } })
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, secure: nil,
            verifier: AccessTokenVerifier(keys: [ServeOptions.devKey: ServeOptions.devSecret]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(media: media.endpoint),
            media: { command in
                media.post(command)
                recorder.observe(command)
            }, mediaMetrics: { "" })
        defer {
            recorder.stop()
            server.stop()
            media.stop()
        }
        let bot = Process()
        bot.executableURL = builtProduct("roombot")
        bot.arguments = [
            "--url", "ws://\(server.localAddress)/rtc", "--room", "live", "--dev", "--publishers", "1", "--subscribers",
            "0", "--no-simulcast", "--duration", "9",
        ]
        bot.standardOutput = FileHandle.nullDevice
        bot.standardError = FileHandle.nullDevice
        try bot.run()
        defer {
            if bot.isRunning {
                bot.terminate()
                bot.waitUntilExit()
            }
        }
        let now = Int64(Date().timeIntervalSince1970)
        let admin = AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: ServeOptions.devKey, subject: "backend", notBefore: now - 5, expiresAt: now + 600, room: "live",
                grants: AccessTokenGrants(admin: true)),
            secret: ServeOptions.devSecret)
        let api = "http://\(server.localAddress)/api/v1/rooms/live/recording"
        func call(_ method: String) throws -> String {
            try curl(["-X", method, "-H", "Authorization: Bearer \(admin)", api])
        }
        // Without a recorder attached the route says why.
        #expect(try call("POST").contains("501"))
        server.service.attachRecorder(recorder)
        // Media has flowed for a while (the publisher's first keyframe is
        // long gone) before the recording starts.
        usleep(3_000_000)
        let started = try call("POST")
        #expect(started.hasPrefix("HTTP/1.1 202"), "\(started)")
        #expect(!recorder.startRecording(room: String(repeating: "x", count: 300), tracks: nil))
        usleep(3_000_000)
        #expect(recorder.recordingRooms == ["live"])
        #expect(recorder.activeRecordings == 1)
        #expect(
            try curl(["-H", "Authorization: Bearer \(admin)", "http://\(server.localAddress)/api/v1/rooms/live"])
                .contains(#""recording":true"#))
        let stopped = try call("DELETE")
        #expect(stopped.hasPrefix("HTTP/1.1 200"), "\(stopped)")
        let end = Date().addingTimeInterval(3)
        while finished.events.withLock({ $0.isEmpty }), Date() < end { usleep(20_000) }
        let event = try #require(finished.events.withLock { $0.first })
        #expect(event.room == "live")
        #expect(event.reason == .stopped)
        #expect(recorder.recordingRooms.isEmpty)
        // Nothing to stop any more.
        #expect(try call("DELETE").hasPrefix("HTTP/1.1 404"))
        // The file covers all but the first 400 ms of the 3 s: its first
        // keyframe answered the recorder's request (roombot's clip has
        // its own only every 2 s, docs/ROOMBOT.md).
        #expect(event.milliseconds > 2600 && event.milliseconds < 3500, "\(event)")
        let errors = try decodeErrors(event.path)
        #expect(errors.isEmpty, "\(errors)")
        let p = try probe(event.path)
        #expect(p.codecs.sorted() == ["opus", "vp8"])
        #expect(p.duration != nil)
    }
}
