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
    /// Received: the sum of the group's received tracks' mean rates.
    var aggregateMbps: Double = 0
    /// Sent (publishers, participants): RTP packets and the sum of each
    /// bot's mean send rate from its first packet to the end.
    var packetsSent: UInt64 = 0
    var sentMbps: Double = 0
    var rtt: Percentiles
    var errors: [String: Int] = [:]
    /// End-to-end delay (abs-capture-time to frame complete / packet
    /// arrival), every sample of every track of the group, ms.
    var delay: Percentiles
    var videoFrames = 0
    /// Video tracks by the height they showed last (keyframe header for
    /// VP8, decoded picture for H.264), as "720": count.
    var videoHeights: [String: Int] = [:]
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
    var transportFeedbackSent = 0
    var retransmissionsReceived = 0
    var keyframeRequestsReceived = 0
    var nacksReceived = 0
    /// Room WebSockets that dropped and were joined again: resumed
    /// (`reconnects`), or as a new participant that negotiated afresh
    /// (`rejoins`).
    var reconnects = 0
    /// `--data-rate`: messages sent, received, and expected (each sent one
    /// times the other bots of its room whose data channel opened; only
    /// the bots of this group), and the latency of those received.
    var dataSent = 0
    var dataReceived = 0
    var dataExpected = 0
    var dataLatency = Percentiles([])
    var dataDeliveryRatio: Double? { dataExpected > 0 ? Double(dataReceived) / Double(dataExpected) : nil }
    var rejoins = 0
    /// Per rejoin that brought media back, from the drop to the first
    /// frame after it (`BotRecord.recoveryMilliseconds`), and the longest.
    var recovery: Percentiles
    var recoveryMax: Double?

    var lossPercent: Double {
        let expected = Double(packets) + Double(max(lost, 0))
        return expected > 0 ? Double(max(lost, 0)) / expected * 100 : 0
    }

    /// `end`: when the run stopped; stalls and freezes still going on then
    /// count up to it, and bitrates are over the time up to it.
    init(name: String, records: [BotRecord], end: Instant) {
        self.name = name
        bots = records.count
        joined = records.filter { $0.joinedAt != nil }.count
        connected = records.filter(\.isConnected).count
        join = Percentiles(records.compactMap(\.joinMilliseconds))
        connect = Percentiles(records.compactMap(\.connectMilliseconds))
        firstFrame = Percentiles(records.compactMap(\.firstFrameMilliseconds))
        rtt = Percentiles(records.flatMap(\.rttMilliseconds))
        dataLatency = Percentiles(records.flatMap(\.dataLatencyMilliseconds))
        var dataBotsByRoom: [String: Int] = [:]
        for r in records where r.dataChannelOpen { dataBotsByRoom[r.room, default: 0] += 1 }
        for r in records {
            dataSent += r.dataSent
            dataReceived += r.dataReceived
            dataExpected += r.dataSent * max(0, (dataBotsByRoom[r.room] ?? 0) - 1)
        }
        let recoveries = records.flatMap(\.recoveryMilliseconds)
        recovery = Percentiles(recoveries)
        recoveryMax = recoveries.max()
        // Set again after the loop; `sinkFigures` needs every field set.
        delay = Percentiles([])
        switchTime = Percentiles([])
        var delays: [Double] = []
        var switchTimes: [Double] = []
        for r in records {
            for session in r.sessions {
                for sink in session.sinks.values {
                    sinkFigures(sink, until: session.measuredEnd(end), switchTimes: &switchTimes)
                }
            }
            delays += r.delayMilliseconds
            switchesRequested += r.switchesRequested
            packetsSent += r.packetsSent
            sentMbps += r.sentBitsPerSecond(until: end) / 1e6
            streamStates += r.streamStates
            publisherLayerMessages += r.publisherLayerMessages
            nacksSent += r.nacksSent
            packetsNacked += r.packetsNacked
            plisSent += r.plisSent
            transportFeedbackSent += r.transportFeedbackSent
            retransmissionsReceived += r.retransmissionsReceived
            keyframeRequestsReceived += r.keyframeRequestsReceived
            nacksReceived += r.nacksReceived
            reconnects += r.reconnects
            rejoins += r.rejoins
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
            for t in r.allTracks {
                packets += t.reception.packetsReceived
                lost += max(t.reception.cumulativeLost, 0)
                jitters.append(Double(t.reception.jitter) / Double(t.track.codec.clockRate) * 1000)
                let rate = t.bitsPerSecond(until: end)
                kbps.append(rate / 1000)
                aggregateMbps += rate / 1e6
            }
            for (k, v) in r.errors { errors[k, default: 0] += v }
        }
        meanJitterMs = jitters.isEmpty ? nil : jitters.reduce(0, +) / Double(jitters.count)
        meanTrackKbps = kbps.isEmpty ? nil : kbps.reduce(0, +) / Double(kbps.count)
    }

    /// One sink's figures, its freezes measured up to `until` (the run's
    /// end, or the drop that closed its session).
    private mutating func sinkFigures(
        _ sink: BotMediaSink, until: Instant, switchTimes: inout [Double]
    ) {
        let f = sink.figures
        switchTimes += f.switchTimes.kept.map(\.milliseconds)
        if f.kind == "video" { videoFrames += f.frames }
        if f.kind == "video", let h = f.height { videoHeights[String(h), default: 0] += 1 }
        keyframes += f.keyframes
        framesUndecodable += f.framesUndecodable
        framesIncomplete += f.framesIncomplete
        audioDecodeErrors += f.decodeErrors
        if let fz = sink.freezes {
            let measured = fz.measured(until: until)
            freezeCount += measured.freezeCount
            freezeSeconds += measured.totalFreezeDuration.milliseconds / 1000
        } else {
            freezeCount += f.freezeCount
            freezeSeconds += f.freezeDuration.milliseconds / 1000
        }
        switches += f.switches
        switchesNotOnKeyframe += f.switchesNotOnKeyframe
        switchesUnfinished += f.switchesUnfinished
    }

    var json: [String: Any] {
        [
            "bots": bots, "joined": joined, "transportsConnected": connected, "joinMs": join.json,
            "connectMs": connect.json, "firstFrameMs": firstFrame.json, "tracksPublished": tracksPublished,
            "tracksExpected": tracksExpected, "tracksAnnounced": tracksAnnounced, "tracksFlowing": tracksFlowing,
            "packets": packets, "lost": lost, "lossPercent": lossPercent, "jitterMs": meanJitterMs ?? NSNull(),
            "meanTrackKbps": meanTrackKbps ?? NSNull(), "aggregateMbps": aggregateMbps, "packetsSent": packetsSent,
            "sentMbps": sentMbps, "rttMs": rtt.json,
            "errors": errors, "delayMs": delay.json, "videoFramesComplete": videoFrames, "videoHeights": videoHeights,
            "keyframes": keyframes,
            "framesUndecodable": framesUndecodable, "framesIncomplete": framesIncomplete,
            "audioDecodeErrors": audioDecodeErrors, "freezes": freezeCount, "freezeSeconds": freezeSeconds,
            "switches": switches, "switchesNotOnKeyframe": switchesNotOnKeyframe,
            "switchesRequested": switchesRequested, "switchMs": switchTime.json, "switchesUnfinished": switchesUnfinished,
            "streamStateMessages": streamStates, "publisherLayerMessages": publisherLayerMessages,
            "nacksSent": nacksSent, "packetsNacked": packetsNacked, "plisSent": plisSent,
            "transportFeedbackSent": transportFeedbackSent,
            "retransmissionsReceived": retransmissionsReceived, "keyframeRequestsReceived": keyframeRequestsReceived,
            "nacksReceived": nacksReceived, "reconnects": reconnects, "rejoins": rejoins,
            "recoveryMs": recovery.json.merging(["max": recoveryMax ?? NSNull()]) { $1 },
            "dataSent": dataSent, "dataReceived": dataReceived, "dataExpected": dataExpected,
            "dataDeliveryRatio": dataDeliveryRatio ?? NSNull(), "dataLatencyMs": dataLatency.json,
        ]
    }
}

/// One bot's figures in both directions, for the JSON file's `bots`: a
/// participant is one entry with what it sent and what it received.
struct BotSummary: Equatable {
    var identity: String
    var role: BotRole
    var room: String
    var joined: Bool
    var connected: Bool
    var tracksPublished: Int
    var packetsSent: UInt64
    var sentKbps: Double
    var tracksExpected: Int
    var tracksAnnounced: Int
    var tracksFlowing: Int
    /// Tracks that delivered a packet, by kind ("audio", "video").
    var flowingByKind: [String: Int]
    var packetsReceived: UInt64
    var receivedKbps: Double
    var errors: Int
    /// The `--url` it used, and its room WebSocket's reconnects.
    var url: String
    var reconnects: Int
    /// Joined again as a new participant, and each one's recovery (ms).
    var rejoins: Int
    var recoveryMilliseconds: [Double]
    /// Its end-to-end delay (`GroupSummary.delay`, this bot's alone): in a
    /// cluster, what a node's subscribers see (Scripts/cluster-cascade).
    var delay: Percentiles
    /// `--light`: counted RTP headers only.
    var light = false
    /// Packets received by kind ("audio", "video").
    var packetsByKind: [String: UInt64] = [:]

    init(_ r: BotRecord, url: String, end: Instant) {
        identity = r.identity
        self.url = url
        reconnects = r.reconnects
        rejoins = r.rejoins
        recoveryMilliseconds = r.recoveryMilliseconds
        delay = Percentiles(r.delayMilliseconds)
        role = r.role
        room = r.room
        joined = r.joinedAt != nil
        connected = r.isConnected
        tracksPublished = r.tracksPublished
        packetsSent = r.packetsSent
        sentKbps = r.sentBitsPerSecond(until: end) / 1000
        tracksExpected = r.tracksExpected
        tracksAnnounced = r.tracksAnnounced
        tracksFlowing = r.tracksFlowing
        var kinds: [String: Int] = [:]
        for t in r.tracks.values where t.reception.packetsReceived > 0 { kinds["\(t.track.kind)", default: 0] += 1 }
        flowingByKind = kinds
        light = r.light
        let all = r.allTracks
        for t in all { packetsByKind["\(t.track.kind)", default: 0] += t.reception.packetsReceived }
        packetsReceived = all.reduce(0) { $0 + $1.reception.packetsReceived }
        receivedKbps = all.reduce(0) { $0 + $1.bitsPerSecond(until: end) } / 1000
        errors = r.errors.values.reduce(0, +)
    }

    var json: [String: Any] {
        [
            "identity": identity, "role": role.rawValue, "room": room, "joined": joined, "connected": connected,
            "tracksPublished": tracksPublished, "packetsSent": packetsSent, "sentKbps": sentKbps,
            "tracksExpected": tracksExpected, "tracksAnnounced": tracksAnnounced, "tracksFlowing": tracksFlowing,
            "flowingByKind": flowingByKind, "packetsReceived": packetsReceived, "receivedKbps": receivedKbps, "errors": errors,
            "light": light, "packetsByKind": packetsByKind, "url": url, "reconnects": reconnects,
            "rejoins": rejoins, "recoveryMs": recoveryMilliseconds, "delayMs": delay.json,
        ]
    }
}

/// The longest stretch one received track delivered nothing: frames for
/// video (complete and decodable), packets for audio and for video too
/// (a track whose packets stop stops its frames).
struct TrackStall: Equatable {
    var bot: String
    var track: String
    var longest: Duration
    /// Still going on when the run ended.
    var ongoing: Bool
}

/// The end-of-run report: a table per role and overall, the JSON file, and
/// the exit status from the thresholds.
struct BotReport {
    var groups: [GroupSummary]
    /// With several `--url`s: per URL in their order, every role together
    /// (named `url-1`...); empty with one.
    var byServer: [GroupSummary] = []
    /// The `--url`s as given.
    var serverURLs: [String]
    /// Every bot, in start order.
    var bots: [BotSummary]
    var durationSeconds: Double
    var interrupted: Bool
    /// The signal that cut the run short before `--duration` ended.
    var cutShortBy: Int32?
    /// Per received track that flowed, its longest stall, longest first.
    var stalls: [TrackStall]
    /// The first detail of each error kind, for the reasons.
    var errorDetails: [String: String]
    /// Tracks that never delivered a packet though announced, with media on.
    var mediaChecked: Bool
    var wide: Bool
    /// `--light`: subscribing bots that counted headers only, and those
    /// that decrypted and decoded (the sample).
    var lightCounts: (light: Int, decoded: Int)
    /// The table's `--light` line (nil without it).
    var lightSummary: [String]?

    init(
        records: [BotRecord], options: BotOptions, end: Instant, durationSeconds: Double, interrupted: Bool,
        cutShortBy: Int32? = nil
    ) {
        groups = BotRole.allCases.map { role in
            GroupSummary(name: role.rawValue, records: records.filter { $0.role == role }, end: end)
        }
        groups.append(GroupSummary(name: "overall", records: records, end: end))
        let urls = options.servers.map(\.text)
        serverURLs = urls
        if urls.count > 1 {
            byServer = urls.indices.map { i in
                GroupSummary(name: "url-\(i + 1)", records: records.filter { $0.serverIndex == i }, end: end)
            }
        }
        bots = records.map { BotSummary($0, url: urls.indices.contains($0.serverIndex) ? urls[$0.serverIndex] : "", end: end) }
        self.durationSeconds = durationSeconds
        self.interrupted = interrupted
        self.cutShortBy = cutShortBy
        mediaChecked = !options.noMedia
        wide = options.wideTable
        let subscribing = records.filter(\.role.subscribes)
        lightCounts = (subscribing.filter(\.light).count, subscribing.filter { !$0.light }.count)
        var stalls: [TrackStall] = []
        var details: [String: String] = [:]
        for r in records {
            for (kind, detail) in r.errorDetails where details[kind] == nil { details[kind] = "\(r.identity): \(detail)" }
            // Before a rejoin, each track is measured up to the drop.
            for session in r.sessions {
                for (ssrc, t) in session.tracks where t.firstPacketAt != nil {
                    let stop = t.measuredEnd(end)
                    var gaps = t.gaps(until: end)
                    var ongoing = gaps.last.map { stop - $0 > gaps.threshold } ?? false
                    if let frames = session.sinks[ssrc]?.freezes?.measured(until: stop), frames.longestGap > gaps.longestGap {
                        ongoing = frames.last.map { stop - $0 > frames.threshold } ?? false
                        gaps = frames
                    }
                    let name = "\(t.track.kind) track \(t.track.trackID ?? "mid \(t.track.mid)")"
                    stalls.append(TrackStall(bot: r.identity, track: name, longest: gaps.longestGap, ongoing: ongoing))
                }
            }
        }
        self.stalls = stalls.sorted { $0.longest > $1.longest }
        errorDetails = details
        lightSummary = nil
        lightSummary = lightLine(options)
    }

    var overall: GroupSummary { groups[groups.count - 1] }

    /// 2 when the run itself failed (a bot did not join or connect, a
    /// subscriber was not offered or never received every track, or an
    /// error happened without --allow-errors), else 1 when a threshold is
    /// missed, else 0; a run cut short by a signal is 128 + the signal
    /// whatever it measured. Returns every reason, with values unrounded.
    func exitStatus(_ o: BotOptions) -> (Int32, [String]) {
        let all = overall
        var failures: [String] = []
        if all.joined < all.bots { failures.append("\(all.bots - all.joined) of \(all.bots) bots did not join") }
        if all.connected < all.bots {
            failures.append("\(all.bots - all.connected) of \(all.bots) bots did not connect their transport")
        }
        // Whoever receives: subscribers, grid participants, or both.
        let receivers = o.participants == 0 ? "subscribers" : o.subscribers == 0 ? "participants" : "receivers"
        if all.tracksAnnounced < all.tracksExpected && all.tracksExpected > 0 {
            failures.append("\(receivers) were offered \(all.tracksAnnounced) of \(all.tracksExpected) tracks")
        }
        if mediaChecked, all.tracksFlowing < all.tracksExpected {
            failures.append("\(receivers) received media on \(all.tracksFlowing) of \(all.tracksExpected) expected tracks")
        }
        let errors = all.errors.values.reduce(0, +)
        if errors > 0, !o.allowErrors {
            let kinds = all.errors.sorted { $0.key < $1.key }.map { kind, n in
                "\(kind) x\(n)" + (errorDetails[kind].map { " (\($0))" } ?? "")
            }
            failures.append("\(errors) errors: " + kinds.joined(separator: "; "))
        }
        var missed: [String] = []
        let maxFreeze = Duration.nanoseconds(Int64(o.maxFreezeSeconds * 1e9))
        let frozen = stalls.filter { $0.longest > maxFreeze }
        if let worst = frozen.first {
            missed.append(
                "freeze \(worst.longest.milliseconds / 1000) s > --max-freeze \(o.maxFreezeSeconds) s on \(worst.bot) \(worst.track)"
                    + (worst.ongoing ? " (still frozen at the end)" : "")
                    + (frozen.count > 1 ? " and \(frozen.count - 1) more tracks" : ""))
        }
        if let max = o.maxLossPercent, all.lossPercent > max {
            missed.append("loss \(all.lossPercent)% > --max-loss \(max)%")
        }
        if let max = o.maxJoinMilliseconds, let p95 = all.join.p95, p95 > max {
            missed.append("join p95 \(p95) ms > --max-join-ms \(max) ms")
        }
        if let max = o.maxDelayMilliseconds {
            if let p95 = all.delay.p95 {
                if p95 > max { missed.append("delay p95 \(p95) ms > --max-delay-ms \(max) ms") }
            } else {
                missed.append("--max-delay-ms: no end-to-end delay measured")
            }
        }
        if let min = o.minBitrateKbps, (all.meanTrackKbps ?? 0) < min {
            missed.append("bitrate \(all.meanTrackKbps ?? 0) kbps per track < --min-bitrate \(min) kbps")
        }
        let status: Int32 = !failures.isEmpty ? 2 : !missed.isEmpty ? 1 : 0
        if let signal = cutShortBy {
            return (128 + signal, ["cut short by signal \(signal) after \(durationSeconds) s"] + failures + missed)
        }
        return (status, failures + missed)
    }

    func json(_ o: BotOptions) -> [String: Any] {
        let (status, reasons) = exitStatus(o)
        var byRole: [String: Any] = [:]
        for g in groups { byRole[g.name] = g.json }
        let stallList: [[String: Any]] = stalls.prefix(20).map {
            ["bot": $0.bot, "track": $0.track, "longestSeconds": $0.longest.milliseconds / 1000, "ongoing": $0.ongoing]
        }
        var perURL: [String: Any] = [:]
        if !byServer.isEmpty {
            // Only with several URLs: a single-URL file stays as it was.
            perURL["urls"] = serverURLs
            perURL["byURL"] = zip(serverURLs, byServer).map { url, g in g.json.merging(["url": url]) { $1 } }
        }
        return perURL.merging([
            "url": serverURLs.first ?? "", "rooms": o.rooms, "publishersPerRoom": o.publishers,
            "subscribersPerRoom": o.subscribers,
            "participantsPerRoom": o.participants, "layout": o.layout?.rawValue ?? NSNull(), "bots": bots.map(\.json),
            "audioOnly": o.audioOnly, "simulcast": o.simulcast, "whip": o.whip, "whep": o.whep,
            "durationSeconds": durationSeconds, "interrupted": interrupted, "cutShort": cutShortBy != nil,
            "exitStatus": Int(status), "failures": reasons, "groups": byRole, "longestStalls": stallList,
            "maxFreezeSeconds": o.maxFreezeSeconds, "errorDetails": errorDetails, "light": lightJSON(o),
            "threads": o.threads, "videoKbps": o.videoKbps ?? NSNull(), "fps": o.framesPerSecond ?? NSNull(),
        ]) { $1 }
    }
}

extension Duration {
    var milliseconds: Double { Double(nanoseconds) / 1e6 }
}

extension BotReport {
    /// `--light` as run: off, or the sample and what light bots skip.
    func lightJSON(_ o: BotOptions) -> Any {
        guard o.light else { return false }
        let c = lightCounts
        return [
            "headerOnlySubscribers": c.light, "decodedSubscribers": c.decoded, "decodeEvery": o.decodeEvery,
            "nack": false,
        ] as [String: Any]
    }

    /// The table's line about `--light` in pieces, nil without it.
    func lightLine(_ o: BotOptions) -> [String]? {
        guard o.light else { return nil }
        let c = lightCounts
        let sample = o.decodeEvery == 0 ? "none" : "1 in \(o.decodeEvery)"
        return [
            "light mode: \(c.light) subscribers counted RTP headers only",
            "\(c.decoded) decrypted and decoded (sample: \(sample))",
            "light ones send RRs but no NACKs (their loss is what the server did not deliver)",
        ]
    }
}

extension BotRecord {
    /// Every end-to-end delay sample the bot kept, in milliseconds:
    /// abs-capture-time to frame complete for its decoded tracks, to packet
    /// arrival for the others.
    var delayMilliseconds: [Double] {
        var out: [Double] = []
        for session in sessions {
            for sink in session.sinks.values { out += sink.figures.delay.kept.map(\.milliseconds) }
        }
        for stats in allTracks { if let d = stats.delay { out += d.kept.map(\.milliseconds) } }
        return out
    }
}
