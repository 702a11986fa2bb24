import Foundation

/// The summary as text: by default a table of at most 100 columns (the
/// figures a run is judged by) and per group a few wrapped lines with the
/// rest; `--wide` prints the full one-line-per-group table instead.
extension BotReport {
    static let width = 100

    static func ms(_ v: Double?) -> String { v.map { String(format: "%.0f", $0) } ?? "-" }

    var table: String {
        var lines = [
            String(format: "roombot summary after %.1f s%@", durationSeconds, interrupted ? " (interrupted)" : "")
        ]
        let shown = groups.filter { $0.bots > 0 || $0.name == "overall" }
        lines += wide ? shown.wideRows : shown.narrowRows
        for g in shown { lines += Self.wrap(g.details, first: "  \(g.name): ") }
        lines += perServerLines
        if let light = lightSummary { lines += Self.wrap(light, first: "") }
        let errors = overall.errors.sorted { $0.key < $1.key }
        if !errors.isEmpty {
            lines += Self.wrap(errors.map { "\($0.key)=\($0.value)" }, first: "errors by kind: ")
        }
        if let worst = stalls.first, worst.longest > .milliseconds(500) {
            lines.append(
                String(format: "longest stall %.1f s", worst.longest.milliseconds / 1000)
                    + " on \(worst.bot) \(worst.track)" + (worst.ongoing ? " (still frozen at the end)" : ""))
        }
        return lines.joined(separator: "\n")
    }

    /// With several `--url`s, the same table per URL (every role of its
    /// bots together), then which URL each row is, with the packets it
    /// received and its reconnects; nothing with one URL.
    var perServerLines: [String] {
        guard !byServer.isEmpty else { return [] }
        var lines = ["per URL:"] + (wide ? byServer.wideRows(header: "url") : byServer.narrowRows(header: "url"))
        for (url, g) in zip(serverURLs, byServer) {
            lines += Self.wrap(
                [url, "\(g.packets) packets received", "\(g.packetsSent) sent", "reconnects \(g.reconnects)"]
                    + g.rejoinLines,
                first: "  \(g.name): ")
        }
        return lines
    }

    /// Items joined with ", ", broken into lines of at most `width`.
    static func wrap(_ items: [String], first: String, indent: String = "    ") -> [String] {
        var lines: [String] = []
        var line = first
        var empty = true
        for item in items {
            let piece = empty ? item : ", " + item
            if !empty, line.count + piece.count > width {
                lines.append(line + ",")
                line = indent + item
            } else {
                line += piece
            }
            empty = false
        }
        lines.append(line)
        return lines
    }
}

extension GroupSummary {
    var details: [String] {
        let delay = "\(BotReport.ms(delay.p50))/\(BotReport.ms(delay.p95))/\(BotReport.ms(delay.p99))"
        let switchMs = "\(BotReport.ms(switchTime.p50))/\(BotReport.ms(switchTime.p95))"
        // Sending first where the group publishes: a participant's row is
        // both directions.
        let sent = tracksPublished > 0 ? [String(format: "sent %.2f Mbps", sentMbps) + " on \(tracksPublished) tracks"] : []
        return sent + [
            "delay p50/p95/p99 \(delay) ms", "rtt p50 \(BotReport.ms(rtt.p50)) ms",
            "jitter \(meanJitterMs.map { String(format: "%.1f", $0) } ?? "-") ms",
            "video frames \(videoFrames) (undecodable \(framesUndecodable))",
            "freezes \(freezeCount)" + String(format: " (%.1f s)", freezeSeconds),
            "switches \(switches) (not on keyframe \(switchesNotOnKeyframe))",
            "requested \(switchesRequested) took p50/p95 \(switchMs) ms", "audio decode errors \(audioDecodeErrors)",
            "NACKs \(nacksSent) sent/\(nacksReceived) received", "PLIs \(plisSent)", "transport-cc \(transportFeedbackSent)",
            "RTX \(retransmissionsReceived)",
        ] + (reconnects > 0 ? ["reconnects \(reconnects)"] : []) + rejoinLines + dataLines
    }

    /// `--data-rate`: messages sent and received, the delivery ratio and
    /// the latency p50/p95/p99.
    var dataLines: [String] {
        guard dataSent > 0 || dataReceived > 0 else { return [] }
        let ratio = dataDeliveryRatio.map { String(format: "%.3f", $0) } ?? "-"
        let latency = "\(BotReport.ms(dataLatency.p50))/\(BotReport.ms(dataLatency.p95))/\(BotReport.ms(dataLatency.p99))"
        return ["data \(dataSent) sent/\(dataReceived) received (delivery \(ratio)), latency p50/p95/p99 \(latency) ms"]
    }

    /// After a rejoin: how many, and the time from the drop to the first
    /// frame after it (the outage its clients saw), p50/p95/max.
    var rejoinLines: [String] {
        guard rejoins > 0 else { return [] }
        let times = "\(BotReport.ms(recovery.p50))/\(BotReport.ms(recovery.p95))/\(BotReport.ms(recoveryMax))"
        return ["rejoins \(rejoins) (recovered \(recovery.count))", "recovery p50/p95/max \(times) ms"]
    }
}

extension [GroupSummary] {
    /// 99 columns: role, bots, joined, connected, join and first-frame
    /// p50/p95, tracks expected/announced/flowing, loss, kbps per track,
    /// Mbps received/sent, freezes, errors. Everything but the sent Mbps
    /// is the receive side (a participant's row has both).
    var narrowRows: [String] { narrowRows(header: "role") }

    /// The same with `header` over the first column (`url` per URL).
    func narrowRows(header: String) -> [String] {
        func row(_ cells: [String]) -> String {
            let widths = [11, 4, 4, 4, 11, 12, 12, 6, 7, 10, 4, 4]
            var line = cells[0].padding(toLength: widths[0], withPad: " ", startingAt: 0)
            for (cell, w) in zip(cells.dropFirst(), widths.dropFirst()) {
                line += " " + String(repeating: " ", count: Swift.max(0, w - cell.count)) + cell
            }
            return line
        }
        var rows = [
            row([
                header, "bots", "join", "conn", "join p50/95", "frame p50/95", "tracks e/a/f", "loss%", "kbps/tr",
                "rx/tx Mbps", "frz", "err",
            ])
        ]
        for g in self {
            rows.append(
                row([
                    g.name, "\(g.bots)", "\(g.joined)", "\(g.connected)",
                    "\(BotReport.ms(g.join.p50))/\(BotReport.ms(g.join.p95))",
                    "\(BotReport.ms(g.firstFrame.p50))/\(BotReport.ms(g.firstFrame.p95))",
                    "\(g.tracksExpected)/\(g.tracksAnnounced)/\(g.tracksFlowing)", String(format: "%.2f", g.lossPercent),
                    g.meanTrackKbps.map { String(format: "%.0f", $0) } ?? "-",
                    String(format: "%.2f/%.2f", g.aggregateMbps, g.sentMbps),
                    "\(g.freezeCount)", "\(g.errors.values.reduce(0, +))",
                ]))
        }
        return rows
    }

    /// The full table, about 190 columns (`--wide`).
    var wideRows: [String] { wideRows(header: "role") }

    func wideRows(header: String) -> [String] {
        var lines = [
            header.padding(toLength: 13, withPad: " ", startingAt: 0)
                + "bots joined conn  join p50/p95/p99 ms   connect p50/p95/p99 ms  1st frame p50/p95 ms  tracks exp/ann/flow  packets   loss%  jitter ms  kbps/track  Mbps   txMbps  errors"
        ]
        for g in self {
            let join = "\(BotReport.ms(g.join.p50))/\(BotReport.ms(g.join.p95))/\(BotReport.ms(g.join.p99))"
            let connect = "\(BotReport.ms(g.connect.p50))/\(BotReport.ms(g.connect.p95))/\(BotReport.ms(g.connect.p99))"
            let first = "\(BotReport.ms(g.firstFrame.p50))/\(BotReport.ms(g.firstFrame.p95))"
            let tracks = "\(g.tracksExpected)/\(g.tracksAnnounced)/\(g.tracksFlowing)"
            lines.append(
                g.name.padding(toLength: 12, withPad: " ", startingAt: 0)
                    + String(format: " %4d %6d %4d", g.bots, g.joined, g.connected)
                    + "  " + join.padding(toLength: 22, withPad: " ", startingAt: 0)
                    + connect.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + first.padding(toLength: 22, withPad: " ", startingAt: 0)
                    + tracks.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + String(
                        format: "%8llu  %5.2f  %9@  %10@  %5.2f  %6.2f  %d", g.packets, g.lossPercent,
                        g.meanJitterMs.map { String(format: "%.1f", $0) } ?? "-",
                        g.meanTrackKbps.map { String(format: "%.0f", $0) } ?? "-", g.aggregateMbps, g.sentMbps,
                        g.errors.values.reduce(0, +)))
        }
        return lines
    }
}
