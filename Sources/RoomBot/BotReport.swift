import BotMedia
import Foundation
import Wire

/// p50/p95/p99 of a list of milliseconds (nearest rank).
struct Percentiles: Equatable {
    var count: Int
    var p50: Double?
    var p95: Double?
    var p99: Double?

    init(_ values: [Double]) {
        let sorted = values.sorted()
        count = sorted.count
        func rank(_ p: Double) -> Double? {
            guard !sorted.isEmpty else { return nil }
            let index = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
            return sorted[min(max(index, 0), sorted.count - 1)]
        }
        p50 = rank(50)
        p95 = rank(95)
        p99 = rank(99)
    }

    var json: [String: Any] {
        ["count": count, "p50": p50 ?? NSNull(), "p95": p95 ?? NSNull(), "p99": p99 ?? NSNull()]
    }
}

/// The figures of one group of bots (a role, or all of them).
struct GroupSummary {
    var name: String
    var bots = 0
    var joined = 0
    var connected = 0
    var join: Percentiles
    var connect: Percentiles
    var firstFrame: Percentiles
    var tracksExpected = 0
    var tracksAnnounced = 0
    var tracksFlowing = 0
    var tracksPublished = 0
    var packets: UInt64 = 0
    var lost: Int64 = 0
    var meanJitterMs: Double?
    var meanTrackKbps: Double?
    var aggregateMbps: Double = 0
    var rtt: Percentiles
    var errors: [String: Int] = [:]
    /// End-to-end delay (abs-capture-time to frame complete / packet
    /// arrival), every sample of every track of the group, ms.
    var delay: Percentiles
    var videoFrames = 0
    var keyframes = 0
    var framesUndecodable = 0
    var framesIncomplete = 0
    var audioDecodeErrors = 0
    var freezeCount = 0
    var freezeSeconds = 0.0
    var switches = 0
    var switchesNotOnKeyframe = 0
    var switchesRequested = 0
    var switchTime: Percentiles
    var switchesUnfinished = 0
    var streamStates = 0
    var publisherLayerMessages = 0
    var nacksSent = 0
    var packetsNacked = 0
    var plisSent = 0
    var retransmissionsReceived = 0
    var keyframeRequestsReceived = 0
    var nacksReceived = 0

    var lossPercent: Double {
        let expected = Double(packets) + Double(max(lost, 0))
        return expected > 0 ? Double(max(lost, 0)) / expected * 100 : 0
    }

    init(name: String, records: [BotRecord]) {
        self.name = name
        bots = records.count
        joined = records.filter { $0.joinedAt != nil }.count
        connected = records.filter(\.isConnected).count
        join = Percentiles(records.compactMap(\.joinMilliseconds))
        connect = Percentiles(records.compactMap(\.connectMilliseconds))
        firstFrame = Percentiles(records.compactMap(\.firstFrameMilliseconds))
        rtt = Percentiles(records.flatMap(\.rttMilliseconds))
        var delays: [Double] = []
        var switchTimes: [Double] = []
        for r in records {
            for sink in r.sinks.values {
                let f = sink.figures
                delays += f.delay.kept.map(\.milliseconds)
                switchTimes += f.switchTimes.kept.map(\.milliseconds)
                if f.kind == "video" { videoFrames += f.frames }
                keyframes += f.keyframes
                framesUndecodable += f.framesUndecodable
                framesIncomplete += f.framesIncomplete
                audioDecodeErrors += f.decodeErrors
                freezeCount += f.freezeCount
                freezeSeconds += f.freezeDuration.milliseconds / 1000
                switches += f.switches
                switchesNotOnKeyframe += f.switchesNotOnKeyframe
                switchesUnfinished += f.switchesUnfinished
            }
            switchesRequested += r.switchesRequested
            streamStates += r.streamStates
            publisherLayerMessages += r.publisherLayerMessages
            nacksSent += r.nacksSent
            packetsNacked += r.packetsNacked
            plisSent += r.plisSent
            retransmissionsReceived += r.retransmissionsReceived
            keyframeRequestsReceived += r.keyframeRequestsReceived
            nacksReceived += r.nacksReceived
        }
        delay = Percentiles(delays)
        switchTime = Percentiles(switchTimes)
        var jitters: [Double] = []
        var kbps: [Double] = []
        for r in records {
            tracksExpected += r.tracksExpected
            tracksAnnounced += r.tracksAnnounced
            tracksFlowing += r.tracksFlowing
            tracksPublished += r.tracksPublished
            for t in r.tracks.values {
                packets += t.reception.packetsReceived
                lost += max(t.reception.cumulativeLost, 0)
                jitters.append(Double(t.reception.jitter) / Double(t.track.codec.clockRate) * 1000)
                kbps.append(t.bitsPerSecond / 1000)
                aggregateMbps += t.bitsPerSecond / 1e6
            }
            for (k, v) in r.errors { errors[k, default: 0] += v }
        }
        meanJitterMs = jitters.isEmpty ? nil : jitters.reduce(0, +) / Double(jitters.count)
        meanTrackKbps = kbps.isEmpty ? nil : kbps.reduce(0, +) / Double(kbps.count)
    }

    var json: [String: Any] {
        [
            "bots": bots, "joined": joined, "transportsConnected": connected, "joinMs": join.json,
            "connectMs": connect.json, "firstFrameMs": firstFrame.json, "tracksPublished": tracksPublished,
            "tracksExpected": tracksExpected, "tracksAnnounced": tracksAnnounced, "tracksFlowing": tracksFlowing,
            "packets": packets, "lost": lost, "lossPercent": lossPercent, "jitterMs": meanJitterMs ?? NSNull(),
            "meanTrackKbps": meanTrackKbps ?? NSNull(), "aggregateMbps": aggregateMbps, "rttMs": rtt.json,
            "errors": errors, "delayMs": delay.json, "videoFramesComplete": videoFrames, "keyframes": keyframes,
            "framesUndecodable": framesUndecodable, "framesIncomplete": framesIncomplete,
            "audioDecodeErrors": audioDecodeErrors, "freezes": freezeCount, "freezeSeconds": freezeSeconds,
            "switches": switches, "switchesNotOnKeyframe": switchesNotOnKeyframe,
            "switchesRequested": switchesRequested, "switchMs": switchTime.json, "switchesUnfinished": switchesUnfinished,
            "streamStateMessages": streamStates, "publisherLayerMessages": publisherLayerMessages,
            "nacksSent": nacksSent, "packetsNacked": packetsNacked, "plisSent": plisSent,
            "retransmissionsReceived": retransmissionsReceived, "keyframeRequestsReceived": keyframeRequestsReceived,
            "nacksReceived": nacksReceived,
        ]
    }
}

/// The end-of-run report: a table per role and overall, the JSON file, and
/// the exit status from the thresholds.
struct BotReport {
    var groups: [GroupSummary]
    var durationSeconds: Double
    var interrupted: Bool

    init(records: [BotRecord], options: BotOptions, durationSeconds: Double, interrupted: Bool) {
        groups = BotRole.allCases.map { role in
            GroupSummary(name: role.rawValue, records: records.filter { $0.role == role })
        }
        groups.append(GroupSummary(name: "overall", records: records))
        self.durationSeconds = durationSeconds
        self.interrupted = interrupted
    }

    var overall: GroupSummary { groups[groups.count - 1] }

    static func ms(_ v: Double?) -> String { v.map { String(format: "%.0f", $0) } ?? "-" }

    var table: String {
        var lines = [
            String(
                format: "roombot summary after %.1f s%@", durationSeconds, interrupted ? " (interrupted)" : ""),
            "role         bots joined conn  join p50/p95/p99 ms   connect p50/p95/p99 ms  1st frame p50/p95 ms  tracks exp/ann/flow  packets   loss%  jitter ms  kbps/track  Mbps   errors",
        ]
        for g in groups where g.bots > 0 || g.name == "overall" {
            let join = "\(Self.ms(g.join.p50))/\(Self.ms(g.join.p95))/\(Self.ms(g.join.p99))"
            let connect = "\(Self.ms(g.connect.p50))/\(Self.ms(g.connect.p95))/\(Self.ms(g.connect.p99))"
            let first = "\(Self.ms(g.firstFrame.p50))/\(Self.ms(g.firstFrame.p95))"
            let tracks = "\(g.tracksExpected)/\(g.tracksAnnounced)/\(g.tracksFlowing)"
            let errors = g.errors.values.reduce(0, +)
            lines.append(
                g.name.padding(toLength: 12, withPad: " ", startingAt: 0)
                    + String(format: " %4d %6d %4d", g.bots, g.joined, g.connected)
                    + "  " + join.padding(toLength: 22, withPad: " ", startingAt: 0)
                    + connect.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + first.padding(toLength: 22, withPad: " ", startingAt: 0)
                    + tracks.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + String(
                        format: "%8llu  %5.2f  %9@  %10@  %5.2f  %d", g.packets, g.lossPercent,
                        g.meanJitterMs.map { String(format: "%.1f", $0) } ?? "-",
                        g.meanTrackKbps.map { String(format: "%.0f", $0) } ?? "-", g.aggregateMbps, errors))
        }
        for g in groups where g.bots > 0 || g.name == "overall" {
            let delay = "\(Self.ms(g.delay.p50))/\(Self.ms(g.delay.p95))/\(Self.ms(g.delay.p99))"
            let switchMs = "\(Self.ms(g.switchTime.p50))/\(Self.ms(g.switchTime.p95))"
            lines.append(
                "  \(g.name): delay p50/p95/p99 \(delay) ms, rtt p50 \(Self.ms(g.rtt.p50)) ms, video frames \(g.videoFrames)"
                    + " (undecodable \(g.framesUndecodable)), freezes \(g.freezeCount)"
                    + String(format: " (%.1f s)", g.freezeSeconds)
                    + ", switches \(g.switches) (not on keyframe \(g.switchesNotOnKeyframe)), requested \(g.switchesRequested)"
                    + " took p50/p95 \(switchMs) ms, audio decode errors \(g.audioDecodeErrors),"
                    + " NACKs \(g.nacksSent) sent/\(g.nacksReceived) received, PLIs \(g.plisSent), RTX \(g.retransmissionsReceived)"
            )
        }
        let errors = overall.errors.sorted { $0.key < $1.key }
        if !errors.isEmpty {
            lines.append("errors by kind: " + errors.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    /// 2 when the run itself failed (a bot did not join or connect, or a
    /// subscriber was not offered every track), else 1 when a threshold is
    /// missed, else 0. Returns the reasons too.
    func exitStatus(_ o: BotOptions) -> (Int32, [String]) {
        let all = overall
        var failures: [String] = []
        if all.joined < all.bots { failures.append("\(all.bots - all.joined) of \(all.bots) bots did not join") }
        if all.connected < all.bots {
            failures.append("\(all.bots - all.connected) of \(all.bots) bots did not connect their transport")
        }
        if all.tracksAnnounced < all.tracksExpected - 0 && all.tracksExpected > 0 {
            failures.append("subscribers were offered \(all.tracksAnnounced) of \(all.tracksExpected) tracks")
        }
        if !failures.isEmpty { return (2, failures) }
        var missed: [String] = []
        if let max = o.maxLossPercent, all.lossPercent > max {
            missed.append(String(format: "loss %.2f%% > %.2f%%", all.lossPercent, max))
        }
        if let max = o.maxJoinMilliseconds, let p95 = all.join.p95, p95 > max {
            missed.append(String(format: "join p95 %.0f ms > %.0f ms", p95, max))
        }
        if let max = o.maxDelayMilliseconds {
            if let p95 = all.delay.p95 {
                if p95 > max { missed.append(String(format: "delay p95 %.0f ms > %.0f ms", p95, max)) }
            } else {
                missed.append("--max-delay-ms: no end-to-end delay measured")
            }
        }
        if let min = o.minBitrateKbps, (all.meanTrackKbps ?? 0) < min {
            missed.append(String(format: "bitrate %.0f kbps per track < %.0f", all.meanTrackKbps ?? 0, min))
        }
        return (missed.isEmpty ? 0 : 1, missed)
    }

    func json(_ o: BotOptions) -> [String: Any] {
        let (status, reasons) = exitStatus(o)
        var byRole: [String: Any] = [:]
        for g in groups { byRole[g.name] = g.json }
        return [
            "url": o.url, "rooms": o.rooms, "publishersPerRoom": o.publishers, "subscribersPerRoom": o.subscribers,
            "audioOnly": o.audioOnly, "simulcast": o.simulcast, "whip": o.whip, "whep": o.whep,
            "durationSeconds": durationSeconds,
            "interrupted": interrupted, "exitStatus": Int(status), "failures": reasons, "groups": byRole,
        ]
    }
}

extension Duration {
    var milliseconds: Double { Double(nanoseconds) / 1e6 }
}
