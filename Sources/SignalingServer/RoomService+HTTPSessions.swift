import NetIO
import RoomProtocol
import Rooms
import Signaling
import Wire

/// WHIP and WHEP through the rooms: the HTTP routes call these from the
/// TCP thread; transport failures arrive from media worker threads. Every
/// call takes the lock once, like a WebSocket message.
extension RoomService {
    /// The token of a WHIP/WHEP request, checked for `room` (the URL's) and
    /// `grant`, as the join it stands for. The identity is the token's
    /// subject.
    func verifySession(token: String, room: String, grant: Grant) throws(AccessTokenError) -> JoinRequest {
        do throws(AccessTokenError) {
            let claims = try verifier.verify(token, room: room, required: grant, nowSeconds: Self.wallClockSeconds())
            let grants = Grants(publish: claims.grants.publish, subscribe: claims.grants.subscribe, admin: claims.grants.admin)
            return JoinRequest(identity: claims.subject, room: claims.room, grants: grants, mode: .sfu)
        } catch {
            state.withLock { $0.joinFailures[error.metricLabel, default: 0] += 1 }
            throw error
        }
    }

    func whipPublish(_ join: JoinRequest, sdp: String, now: Instant) -> Result<HTTPSessionAnswer, RoomError> {
        let parsed = limits.parse(sdp, offer: true)
        let result = state.withLock { $0.directory.whipPublish(join, parsed: parsed, now: now) }
        if case .success(let answer) = result { perform(answer.effects) }
        return result
    }

    func whepPlay(_ join: JoinRequest, target: String?, sdp: String, now: Instant) -> Result<HTTPSessionAnswer, RoomError> {
        let parsed = limits.parse(sdp, offer: true)
        let result = state.withLock { s in
            guard let parts = s.preparedParts.parts(of: join.room, now: now) else {
                return s.directory.whepPlay(join, target: target, parsed: parsed, now: now)
            }
            return s.directory.whepPlay(join, target: target, parsed: parsed, remoteParts: parts, now: now)
        }
        if case .success(let answer) = result { perform(answer.effects) }
        return result
    }

    func hasSession(_ kind: HTTPSessionKind, room: String, session: String) -> Bool {
        state.withLock { $0.directory.hasSession(kind, room: room, session: session) }
    }

    /// nil when there is no such session; otherwise the ended session's
    /// participant, for the log.
    func endSession(_ kind: HTTPSessionKind, room: String, session: String) -> [(String, String)]? {
        let ended: ([RoomEffect], [(String, String)])? = state.withLock { s in
            guard let effects = s.directory.endSession(kind, room: room, session: session) else { return nil }
            var ids: [(String, String)] = [("room", room)]
            if let participant = s.logIDs.sessions.removeValue(forKey: session) {
                if let identity = s.logIDs.participants[participant]?.identity { ids.append(("identity", identity)) }
                ids.append(("participant", participant.rawValue))
            }
            return (effects, ids)
        }
        guard let ended else { return nil }
        perform(ended.0)
        return ended.1
    }

    /// Remembers who a new WHIP/WHEP session is, for its log lines.
    func noteSession(_ answer: HTTPSessionAnswer, kind: HTTPSessionKind, join: JoinRequest, remote: String?) {
        state.withLock { s in
            s.logIDs.sessions[answer.session] = answer.participant
            s.logIDs.participants[answer.participant] = LogIDs.Participant(
                identity: join.identity, room: join.room, remote: remote, kind: kind.rawValue, session: answer.session)
        }
    }

    /// Any thread: a participant's transport failed or closed (the media
    /// worker's report). WHIP/WHEP participants leave; others stay.
    /// A transport the peer closed (`failed` false) is logged at info: every
    /// client that leaves closes its transport (the soak, Scripts/soak,
    /// counts warnings).
    package func transportFailed(_ participant: ParticipantID, failed: Bool = true, now: Instant) {
        let known = state.withLock { $0.logIDs.participants[participant] }
        log(
            failed ? .warning : .info, failed ? "media transport failed" : "media transport closed by the peer",
            known.map { Self.fields(participant, $0) } ?? [("participant", participant.rawValue)])
        perform(state.withLock { $0.directory.transportFailed(participant, now: now) })
    }

    /// Any thread: a media worker's report (active speakers, dynacast
    /// layers, stream state) for the participants concerned.
    package func mediaEvent(_ event: MediaEvent) {
        let now = MonotonicClock.now()
        perform(state.withLock { $0.directory.handle(event, now: now) })
    }
}
