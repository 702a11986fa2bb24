import DataChannel
import Negotiation
import PeerSession
import SCTP
import Wire

/// `--data-rate`: each publishing bot opens a reliable data channel
/// labelled "roombot" on its publisher transport and sends its room a
/// message every 1/rate seconds: its sequence number and the send time on
/// the process's monotonic clock. The server relays it with the sender's
/// identity in front (docs/PROTOCOL.md "Data channels in SFU rooms");
/// receivers count it and its latency. The report's delivery ratio is
/// received over sent times the other data bots of the same room.
extension Bot {
    static let dataLabel = "roombot"

    /// After the publish answer: the server accepted our data channel
    /// section, so SCTP runs once DTLS is up.
    func enableDataChannels(_ answer: ServerAnswer, now: Instant) {
        guard context.options.dataRate > 0, let publisher,
            answer.sections.contains(where: { $0.kind == nil && $0.accepted })
        else { return }
        publisher.transport.enableDataChannels(SCTPConfiguration(), now: now)
    }

    /// Data channel events and the next send, from `tick`.
    func tickData(now: Instant) {
        guard context.options.dataRate > 0, let publisher else { return }
        let events = publisher.dataEvents
        publisher.dataEvents.removeAll(keepingCapacity: true)
        for event in events {
            switch event {
            case .ready:
                guard dataStream == nil else { continue }
                dataStream = publisher.transport.openDataChannel(
                    label: Self.dataLabel, channelType: DataChannelType(policy: .reliable, unordered: false), now: now)
                nextDataAt = now
            case .opened:
                record.dataChannelOpen = true
            case .message(_, _, let payload):
                receiveData(payload, now: now)
            case .channelClosed, .refused, .closed:
                break
            }
        }
        guard let stream = dataStream, let at = nextDataAt, now >= at, !leaving else { return }
        let text = "\(record.dataSent) \(now.nanoseconds)"
        do {
            try publisher.transport.sendData(stream: stream, isText: true, payload: Array(text.utf8), now: now)
            record.dataSent += 1
        } catch {
            record.error("data_send", "data channel send refused: \(error)")
        }
        let interval = Duration.nanoseconds(Int64(1e9 / context.options.dataRate))
        // Catch up at most one interval: a stalled loop does not burst.
        nextDataAt = max(at + interval, now)
    }

    /// "<identity>\n<sequence> <sent nanoseconds>" from another bot.
    private func receiveData(_ payload: [UInt8], now: Instant) {
        guard let newline = payload.firstIndex(of: 0x0A),
            let body = String(validating: payload[(newline + 1)...], as: UTF8.self)
        else { return }
        let fields = body.split(separator: " ")
        guard fields.count == 2, let sent = Int64(fields[1]) else { return }
        record.dataReceived += 1
        if record.dataLatencyMilliseconds.count < 100_000 {
            record.dataLatencyMilliseconds.append(Double(now.nanoseconds - sent) / 1e6)
        }
    }
}
