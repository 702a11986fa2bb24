import RoomProtocol
import Wire

extension RoomDirectory {
    /// A media worker's report, with the time it arrived: data channel
    /// messages need it for the rate limit; the rest as `handle(_:)`.
    package mutating func handle(_ event: MediaEvent, now: Instant) -> [RoomEffect] {
        guard case .dataReceived(let room, let sender, let label, let isText, let payload) = event else {
            return handle(event)
        }
        return relayData(room: room, from: sender, label: label, isText: isText, payload: payload, now: now)
    }

    /// Relays one data channel message (docs/PROTOCOL.md "Data channels"):
    /// checked against the grant, the size limit and the sender's rate;
    /// refusals answer the sender with an error over its room WebSocket
    /// (at most one a second) and keep the session. Receivers are the
    /// other participants of the room whose publish offer had a data
    /// channel section, or the named ones among them.
    mutating func relayData(
        room: String, from sender: ParticipantID, label: String, isText: Bool, payload: [UInt8], now: Instant
    ) -> [RoomEffect] {
        guard let p = participants[sender], p.room == room, rooms[room] != nil else { return [] }
        let limits = configuration.limits
        func refuse(_ code: ErrorCode, _ message: String) -> [RoomEffect] {
            guard participants[sender]?.dataBucket.shouldReportRefusal(now: now) == true else { return [] }
            return send(sender, .error(code: code, message: message))
        }
        guard p.grants.mayPublishData else {
            return refuse(.forbidden, "your token has no publishData grant: data channel message dropped")
        }
        guard payload.count <= limits.dataMessageBytes else {
            return refuse(
                .tooLarge,
                "data channel message of \(payload.count) bytes dropped: at most \(limits.dataMessageBytes)")
        }
        guard
            participants[sender]?.dataBucket.take(
                now: now, rate: limits.dataMessagesPerSecond, burst: limits.dataMessageBurst) == true
        else {
            return refuse(
                .rateLimited,
                "data channel messages over \(limits.dataMessagesPerSecond) a second: dropped until the rate falls")
        }
        let parsed: (recipients: [String], body: ArraySlice<UInt8>)
        do throws(DataMessageEnvelope.ParseError) {
            parsed = try DataMessageEnvelope.parse(payload)
        } catch {
            return refuse(.badRequest, "data channel message with a bad recipient list (\(error)): dropped")
        }
        let relayed = DataMessageEnvelope.relayed(from: p.identity, body: parsed.body)
        let named = Set(parsed.recipients)
        var effects: [RoomEffect] = []
        for member in rooms[room]?.members ?? [] where member != sender {
            guard let receiver = participants[member], receiver.publisher?.dataChannels == true else { continue }
            if !named.isEmpty, !named.contains(receiver.identity) { continue }
            effects.append(
                .media(.sendData(room: room, participant: member, label: label, isText: isText, payload: relayed)))
        }
        return effects
    }
}

extension RoomDirectory {
    /// A data message from the server API (docs/API.md): to every
    /// participant of `room` whose publish offer had a data channel
    /// section, or to those of `identities` among them, on `label`.
    /// Receivers see an empty sender identity (`\n` then the message):
    /// no participant's identity is empty, so it names the server.
    /// Returns how many it went to.
    package mutating func sendServerData(
        room: String, label: String, isText: Bool, payload: [UInt8], to identities: Set<String>
    ) -> Result<(Int, [RoomEffect]), RoomError> {
        guard let members = rooms[room]?.members else { return .failure(RoomError(.unknownRoom, "no room '\(room)'")) }
        let limits = configuration.limits
        guard payload.count <= limits.dataMessageBytes else {
            return .failure(RoomError(.tooLarge, "a data message is at most \(limits.dataMessageBytes) bytes"))
        }
        guard !label.isEmpty, label.utf8.count <= 255 else {
            return .failure(RoomError(.badRequest, "label must be 1 to 255 bytes"))
        }
        guard identities.count <= DataMessageEnvelope.maximumRecipients else {
            return .failure(RoomError(.badRequest, "at most \(DataMessageEnvelope.maximumRecipients) recipients"))
        }
        let relayed = DataMessageEnvelope.relayed(from: "", body: payload[...])
        var effects: [RoomEffect] = []
        for member in members {
            guard let receiver = participants[member], receiver.publisher?.dataChannels == true else { continue }
            if !identities.isEmpty, !identities.contains(receiver.identity) { continue }
            effects.append(.media(.sendData(room: room, participant: member, label: label, isText: isText, payload: relayed)))
        }
        return .success((effects.count, effects))
    }
}
