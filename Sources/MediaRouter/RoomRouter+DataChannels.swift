import DataChannel
import PeerSession
import RoomProtocol
import Rooms
import SCTP
import Wire

/// Data channels on publisher transports (RFC 8831). Not the media path:
/// a message costs one SCTP read on the worker and one report through the
/// worker's mailbox; the rooms layer (grant, size, rate, recipients)
/// answers with `sendData` commands, each run on the recipient's worker.
extension RoomRouter {
    func handleDataChannelEvent(_ event: DataChannelEvent, of key: TransportKey, transport id: TransportID) {
        guard key.role == .publisher, let room = dataChannelRooms[key.participant] else { return }
        switch event {
        case .message(let stream, let isText, let payload):
            guard let t = transports.transport(id), let label = t.dataChannels?.table.channels[stream]?.label else {
                return
            }
            counters.dataMessagesReceived &+= 1
            onMediaEvent?(
                .dataReceived(room: room, sender: key.participant, label: label, isText: isText, payload: payload))
        case .refused:
            counters.dataMessagesRefused &+= 1
        case .ready, .opened, .channelClosed, .closed:
            break
        }
    }

    /// Sends a relayed message on the participant's channel labelled
    /// `label`; dropped (counted) when it has none or SCTP refuses it.
    func sendData(to participant: ParticipantID, label: String, isText: Bool, payload: [UInt8], now: Instant) {
        guard let id = transportID(of: participant, role: .publisher), let t = transports.transport(id),
            let stream = t.dataChannels?.table.channels.values.first(where: { $0.label == label })?.stream
        else {
            counters.dataMessagesUndeliverable &+= 1
            return
        }
        do throws(SCTPError) {
            try t.sendData(stream: stream, isText: isText, payload: payload, now: now)
            counters.dataMessagesSent &+= 1
        } catch {
            counters.dataMessagesUndeliverable &+= 1
        }
    }
}
