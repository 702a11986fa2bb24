import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Recording end to end (issue #16, docs/RECORDING.md): a real `swiftlet
/// serve --record-dir`, a real roombot publisher (Opus and three VP8
/// simulcast layers), and the files checked with Debian's ffprobe and
/// ffmpeg. Debug build only (Scripts/test skips them in release): about
/// 25 s together, mostly the publisher's media time.
@Suite(.serialized) struct RecordingProcessTests {
    /// A temporary recording directory.
    private func makeDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-rec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    private func recordings(in dir: URL, room: String) -> [String] {
        let folder = dir.appendingPathComponent(room)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".webm") }.map { folder.appendingPathComponent($0).path }
    }

    /// Runs a tool to its end (bounded by its own arguments); its stdout
    /// and stderr.
    func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Both pipes read to their end: a tool that fills one while we
        // wait on the other would never finish.
        let errData = Mutex2()
        let thread = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        thread.start()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        while !errData.done { usleep(5_000) }
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: errData.data, as: UTF8.self))
    }

    private final class Mutex2: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Data?
        func set(_ d: Data) { lock.withLock { value = d } }
        var done: Bool { lock.withLock { value != nil } }
        var data: Data { lock.withLock { value ?? Data() } }
    }

    /// ffprobe's view of a file: each stream's codec and start time, and
    /// the container's duration (nil when the file has none: no trailer).
    struct Probe {
        var codecs: [String] = []
        var starts: [String: Double] = [:]
        var duration: Double?
        /// The last packet's time of each stream.
        var lastPacket: [String: Double] = [:]
    }

    func probe(_ path: String) throws -> Probe {
        let r = try run(
            "/usr/bin/ffprobe",
            ["-v", "error", "-show_entries", "format=duration:stream=codec_name,start_time", "-of", "json", path])
        let object = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any]
        var p = Probe()
        for s in object?["streams"] as? [[String: Any]] ?? [] {
            guard let name = s["codec_name"] as? String else { continue }
            p.codecs.append(name)
            p.starts[name] = (s["start_time"] as? String).flatMap(Double.init)
        }
        p.duration = ((object?["format"] as? [String: Any])?["duration"] as? String).flatMap(Double.init)
        let packets = try run(
            "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "packet=codec_type,pts_time", "-of", "csv=p=0", path])
        for line in packets.out.split(separator: "\n") {
            let parts = line.split(separator: ",")
            if parts.count == 2, let t = Double(parts[1]) { p.lastPacket[String(parts[0])] = t }
        }
        return p
    }

    /// `ffmpeg -v error -i FILE -f null -`: decodes every frame; what it
    /// says at level error (nothing when everything decodes).
    func decodeErrors(_ path: String) throws -> String {
        let r = try run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        return r.status == 0 ? r.err : "exit \(r.status): \(r.err)"
    }

    private func startBot(_ url: String, room: String, seconds: Int) throws -> Process {
        let bot = Process()
        bot.executableURL = builtProduct("roombot")
        bot.arguments = [
            "--url", url, "--room", room, "--dev", "--publishers", "1", "--subscribers", "0", "--duration", "\(seconds)",
        ]
        bot.standardOutput = FileHandle.nullDevice
        bot.standardError = FileHandle.nullDevice
        try bot.run()
        return bot
    }

    /// The server's log time of the first line containing `needle`
    /// (`2026-12-07T05:42:57.142Z level ...`), in seconds.
    private func logTime(_ text: String, _ needle: String) -> Double? {
        guard let line = text.split(separator: "\n").first(where: { $0.contains(needle) }),
            let stamp = line.split(separator: " ").first
        else { return nil }
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: String(stamp))?.timeIntervalSince1970
    }

    @Test(.timeLimit(.minutes(1)))
    func recordsAPublisherForTenSecondsToAWebMThatPlaysInSync() throws {
        let dir = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, output, url) = try startDevServer(["--record-dir", dir.path, "--record-rooms", "rec-*"])
        defer {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        let bot = try startBot(url, room: "rec-ten", seconds: 10)
        bot.waitUntilExit()
        #expect(output.wait(for: "recording finished", seconds: 5), "\(output.text)")
        let files = recordings(in: dir, room: "rec-ten")
        let path = try #require(files.first, "no file in \(dir.path)")
        #expect(files.count == 1)

        let log = output.text
        let event = try #require(log.split(separator: "\n").first { $0.contains("recording finished") })
        #expect(event.contains("room=rec-ten") && event.contains("reason=participant-left") && event.contains(path))
        // The publisher's time in the room: its first track to its leave.
        let published = try #require(logTime(log, "media: track"))
        let left = try #require(logTime(log, "media: release"))
        let recorded = left - published

        let p = try probe(path)
        #expect(p.codecs.sorted() == ["opus", "vp8"])
        let duration = try #require(p.duration, "no duration: trailer missing")
        #expect(abs(duration - recorded) <= 0.05 * recorded, "file \(duration) s, published \(recorded) s")
        let audioStart = try #require(p.starts["opus"])
        let videoStart = try #require(p.starts["vp8"])
        #expect(abs(audioStart - videoStart) <= 0.1, "audio starts at \(audioStart) s, video at \(videoStart) s")
        let errors = try decodeErrors(path)
        #expect(errors.isEmpty, "\(errors)")
        // The highest simulcast layer (roombot's f: 1280x720).
        let size = try run(
            "/usr/bin/ffprobe",
            ["-v", "error", "-select_streams", "v", "-show_entries", "stream=width,height", "-of", "csv=p=0", path])
        #expect(size.out.trimmingCharacters(in: .whitespacesAndNewlines) == "1280,720")
        let metrics = try serverMetrics(url)
        #expect(metrics["swiftlet_recordings_finished_total"] == 1)
        #expect(metrics["swiftlet_recordings_active"] == 0)
        #expect(metrics["swiftlet_recorder_packets_dropped_total"] == 0)
    }

    /// SIGKILL leaves no trailer: no Duration, no Cues. Every cluster
    /// flushed before the kill reads and decodes: at most about two
    /// seconds are lost (the open cluster, up to 1 s, the second between
    /// flushes, and the jitter buffer's wait).
    @Test(.timeLimit(.minutes(1)))
    func aServerKilledWithSIGKILLLeavesAFileFFmpegReadsToNearTheEnd() throws {
        let dir = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, output, url) = try startDevServer(["--record-dir", dir.path, "--record-rooms", "rec-kill"])
        defer {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        let bot = try startBot(url, room: "rec-kill", seconds: 20)
        defer {
            if bot.isRunning {
                bot.terminate()
                bot.waitUntilExit()
            }
        }
        #expect(output.wait(for: "media: track", seconds: 10))
        let published = Date()
        usleep(6_000_000)
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        let killedAfter = Date().timeIntervalSince(published)

        let path = try #require(recordings(in: dir, room: "rec-kill").first)
        let p = try probe(path)
        #expect(p.codecs.sorted() == ["opus", "vp8"])
        #expect(p.duration == nil)
        let errors = try decodeErrors(path)
        #expect(errors.isEmpty, "\(errors)")
        let lastVideo = try #require(p.lastPacket["video"])
        let lastAudio = try #require(p.lastPacket["audio"])
        #expect(lastVideo >= killedAfter - 2.5, "video to \(lastVideo) s of \(killedAfter) s")
        #expect(lastAudio >= killedAfter - 2.5, "audio to \(lastAudio) s of \(killedAfter) s")
    }

    /// A publisher that leaves and joins again gets a new file (a rejoin
    /// is a new participant); SIGTERM's drain closes every open file with
    /// its trailer before the workers stop: it has its duration and plays.
    @Test(.timeLimit(.minutes(1)))
    func aRejoinStartsANewFileAndASIGTERMDrainClosesItWithItsTrailer() throws {
        let dir = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, output, url) = try startDevServer([
            "--record-dir", dir.path, "--record-rooms", "rec-term", "--drain-seconds", "1",
        ])
        defer {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        let first = try startBot(url, room: "rec-term", seconds: 3)
        first.waitUntilExit()
        #expect(output.wait(for: "reason=participant-left", seconds: 5), "\(output.text)")
        let again = try startBot(url, room: "rec-term", seconds: 20)
        defer {
            if again.isRunning {
                again.terminate()
                again.waitUntilExit()
            }
        }
        // The second publisher's first track, then 3 s of media.
        let end = Date().addingTimeInterval(10)
        while output.text.components(separatedBy: "media: track").count < 4, Date() < end { usleep(20_000) }
        usleep(3_000_000)
        server.terminate()
        #expect(output.waitForExit(server, seconds: 10))
        #expect(output.text.contains("reason=server-stopping"), "\(output.text)")
        let files = recordings(in: dir, room: "rec-term")
        #expect(files.count == 2, "\(files)")
        for path in files {
            let p = try probe(path)
            #expect(p.codecs.sorted() == ["opus", "vp8"])
            let duration = try #require(p.duration, "no duration: trailer missing in \(path)")
            #expect(duration > 2, "\(path): \(duration) s")
            let errors = try decodeErrors(path)
            #expect(errors.isEmpty, "\(path): \(errors)")
        }
    }
}
