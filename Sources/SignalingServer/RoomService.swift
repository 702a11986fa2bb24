import Foundation
import NetIO
import RoomProtocol
import Rooms
import SDP
import Signaling
import Synchronization
import Wire

/// Where the rooms layer's effects go: bytes to a signalling connection,
/// a connection to close, a command for the media worker owning a room.
package protocol SignalingOutlet: AnyObject, Sendable {
    func send(_ bytes: [UInt8], to connection: ConnectionID)
    func close(_ connection: ConnectionID)
    /// Closes a room WebSocket with this close code and reason.
    func close(_ connection: ConnectionID, code: WebSocketCloseCode, reason: String)
}

extension SignalingOutlet {
    /// One room protocol message (JSON text) as a WebSocket text frame.
    func sendText(_ utf8: [UInt8], to connection: ConnectionID) {
        send(WebSocketFrame(fin: true, opcode: .text, payload: utf8).serialize(), to: connection)
    }
}

/// The rooms of this server behind a lock, shared by the signalling thread
/// (messages) and the ticker (grace-period timeouts). The lock is taken per
/// signalling message, never on the media path.
package final class RoomService: Sendable {
    struct State {
        var directory: RoomDirectory<RandomIdentifiers>
        var webSockets: Set<ConnectionID> = []
        var joinFailures: [String: Int] = [:]
        /// Who is on each connection and each participant, for the log.
        var logIDs = LogIDs()
        /// Joins being placed and sessions proxied to other nodes.
        var cluster = ClusterSessions()
        /// The other nodes' parts of rooms this node serves no part of,
        /// read for a WHEP offer about to be answered here
        /// (`prepareRemoteParts`).
        var preparedParts = PreparedRemoteParts()
    }

    let state: Mutex<State>
    let verifier: AccessTokenVerifier
    private let media: @Sendable (MediaCommand) -> Void
    let outletBox = Mutex<(any SignalingOutlet)?>(nil)
    let clusterBox = Mutex<ClusterLink?>(nil)
    let webhookBox = Mutex<WebhookNotifier?>(nil)
    let recorderBox = Mutex<(any RecordingControl)?>(nil)
    let log: ServerLog
    /// A copy of the directory's limits, read without the lock: SDPs are
    /// parsed under them before the lock is taken.
    let limits: RoomLimits
    /// The built-in TURN server's URLs with credentials for an identity
    /// (joined responses, WHIP/WHEP `Link` headers); nil: none.
    let iceServers: (@Sendable (String) -> [ICEServer])?

    package init(
        verifier: AccessTokenVerifier, configuration: RoomDirectory<RandomIdentifiers>.Configuration,
        media: @escaping @Sendable (MediaCommand) -> Void, log: ServerLog = .off,
        iceServers: (@Sendable (String) -> [ICEServer])? = nil
    ) {
        self.iceServers = iceServers
        var directory = RoomDirectory(configuration: configuration, ids: RandomIdentifiers())
        // Until webhooks are attached nobody reads the rooms' events.
        directory.recordsEvents = false
        state = Mutex(State(directory: directory))
        self.verifier = verifier
        self.media = media
        self.log = log
        limits = configuration.limits
    }

    /// Set once the TCP server exists (it needs the service to make handlers).
    package func attach(_ outlet: any SignalingOutlet) { outletBox.withLock { $0 = outlet } }

    // MARK: Input from WebSocket sessions

    func opened(_ connection: ConnectionID, remote: SocketAddress? = nil) {
        state.withLock { s in
            s.webSockets.insert(connection)
            s.logIDs.connections[connection] = LogIDs.Connection(remote: remote.map { "\($0)" })
        }
        log(.debug, "WebSocket opened", fields(connection))
    }

    func received(text: String, on connection: ConnectionID, now: Instant) {
        let message: ClientMessage
        do throws(RoomProtocolError) {
            message = try ClientMessage(json: text)
        } catch {
            let reason = "not a room protocol message: \(error)"
            log(.warning, "message refused", fields(connection) + [("reason", reason)])
            perform([.send(connection, .error(code: .badRequest, message: reason))], logged: true)
            return
        }
        var join: JoinRequest?
        if case .join(let token, let mode) = message {
            do throws(AccessTokenError) {
                let claims = try verifier.verify(token, room: nil, required: nil, nowSeconds: Self.wallClockSeconds())
                let grants = Grants(
                    publish: claims.grants.publish, subscribe: claims.grants.subscribe, admin: claims.grants.admin,
                    publishData: claims.grants.publishData)
                join = JoinRequest(identity: claims.subject, room: claims.room, grants: grants, mode: mode)
            } catch {
                state.withLock { $0.joinFailures[error.metricLabel, default: 0] += 1 }
                // The reason, never the token.
                log(.warning, "join refused: bad token", fields(connection) + [("reason", error.reason)])
                perform([.send(connection, .error(code: .forbidden, message: error.reason))], logged: true)
                return
            }
            state.withLock { s in
                s.logIDs.connections[connection, default: LogIDs.Connection()].identity = join?.identity
                s.logIDs.connections[connection, default: LogIDs.Connection()].room = join?.room
            }
        }
        // In a cluster a join waits for its room's placement, and a
        // session whose room lives on another node is proxied there.
        if interceptForCluster(text, on: connection, join: join) { return }
        if case .leave = message {
            log(.info, "leave asked", fields(connection))
        } else {
            log(.debug, "received \(message.typeName)", fields(connection))
        }
        // Parsing is the costly part of a publish or an answer: it happens
        // here, on this connection's time, not under the rooms lock.
        var parsedSDP: Result<SessionDescription, RoomError>?
        switch message {
        case .publish(let sdp): parsedSDP = limits.parse(sdp, offer: true)
        case .subscriberAnswer(let sdp, _): parsedSDP = limits.parse(sdp, offer: false)
        default: break
        }
        let effects: [RoomEffect] = state.withLock { s in
            if let join { return s.directory.join(join, connection: connection, now: now) }
            return s.directory.handle(message, from: connection, now: now, parsedSDP: parsedSDP)
        }
        perform(effects)
        if case .leave = message, let id = participant(on: connection) { logDeparture(id) }
    }

    /// The client's close frame (RFC 6455 section 7.4.1), before the
    /// socket closes. 1000 (normal closure, what the page sends after
    /// `leave`) and 1001 (going away: what Chromium sends by itself when a
    /// page with an open WebSocket reloads or its tab closes) mean the client left on purpose: it
    /// leaves now, so the others see it go at once. Any other code, a close
    /// without a code, or no close frame at all (a dropped connection)
    /// gets the grace period, within which the same token resumes.
    func closedByClient(_ connection: ConnectionID, code: WebSocketCloseCode?, now: Instant) {
        guard code == .normalClosure || code == .goingAway else { return }
        clusterClosed(connection, code: code)
        let effects = state.withLock { $0.directory.closedByClient(connection, now: now) }
        if !effects.isEmpty {
            log(.info, "WebSocket closed by the client with \(code.map(\.description) ?? "-"): leave", fields(connection))
        }
        perform(effects)
    }

    func closed(_ connection: ConnectionID, now: Instant) {
        clusterClosed(connection, code: nil)
        let ids = fields(connection)
        let effects = state.withLock { s in
            s.webSockets.remove(connection)
            s.logIDs.connections[connection] = nil
            return s.directory.disconnected(connection, now: now)
        }
        log(ids.contains { $0.0 == "participant" } ? .info : .debug, "WebSocket closed", ids)
        perform(effects)
    }

    // MARK: Time and lifecycle

    package func tick(now: Instant) {
        let effects = state.withLock { s -> [RoomEffect] in
            s.directory.closeEmptyRooms(now: now)
            drainRoomEvents(&s)
            guard let d = s.directory.nextDeadline, d <= now else { return [] }
            log(.info, "grace period over: participants who did not reconnect leave")
            return s.directory.handleTimeout(now: now)
        }
        perform(effects)
        if !effects.isEmpty { logDepartures() }
    }

    /// SIGTERM: no new joins from now on; every connected participant
    /// hears `going-away` with the deadline.
    package func startDraining(until deadline: Instant, deadlineEpochMilliseconds: Int64, now: Instant) {
        log(.info, "draining: going-away to every connected participant")
        let drain = RoomDirectory<RandomIdentifiers>.Drain(
            reason: "server shutting down", deadline: deadline, deadlineEpochMilliseconds: deadlineEpochMilliseconds)
        perform(state.withLock { $0.directory.startDraining(drain, now: now) })
    }

    package var isDraining: Bool { state.withLock { $0.directory.isDraining } }

    /// While draining, the `Retry-After` of refused joins (RFC 9110 section
    /// 10.2.3): the seconds until this server's deadline, when its
    /// replacement should be up; at least 1. Nil when not draining.
    func retryAfterSeconds(now: Instant) -> Int? {
        guard let drain = state.withLock({ $0.directory.drain }) else { return nil }
        let left = (drain.deadline - now).nanoseconds
        return max(1, Int((left + 999_999_999) / 1_000_000_000))
    }

    /// The room WebSockets open now (joined or not).
    var openWebSockets: [ConnectionID] { state.withLock { $0.webSockets.sorted() } }

    package struct Snapshot: Sendable {
        package var rooms: Int
        package var participants: Int
        package var webSockets: Int
        package var joinFailures: [String: Int]
    }

    package var snapshot: Snapshot {
        state.withLock { s in
            Snapshot(
                rooms: s.directory.roomCount, participants: s.directory.localParticipantCount, webSockets: s.webSockets.count,
                joinFailures: s.joinFailures)
        }
    }

    // MARK: Effects

    /// `logged`: the caller logged the refusal these effects carry.
    func perform(_ effects: [RoomEffect], logged: Bool = false) {
        // The events of the change these effects come from.
        if webhookBox.withLock({ $0 != nil }) { state.withLock { drainRoomEvents(&$0) } }
        let outlet = outletBox.withLock { $0 }
        for effect in effects {
            switch effect {
            case .send(let connection, let message):
                if !logged { logSend(message, to: connection) }
                guard let json = try? encode(message, to: connection) else {
                    log(.error, "cannot encode \(message.typeName) for the client", fields(connection))
                    continue
                }
                outlet?.sendText(json, to: connection)
            case .close(let connection):
                log(.info, "connection closed: replaced by a newer connection of the same identity", fields(connection))
                outlet?.close(connection)
            case .media(let command):
                log(.debug, "media: \(command.summary)")
                media(command)
                if case .releaseParticipant(_, let participant) = command { logDeparture(participant) }
            }
        }
    }

    private func logSend(_ message: ServerMessage, to connection: ConnectionID) {
        switch message {
        case .joined(let id, let room, let mode, let others, let resumed):
            state.withLock { s in
                s.logIDs.connections[connection, default: LogIDs.Connection()].participant = id
                s.logIDs.connections[connection, default: LogIDs.Connection()].room = room
                let identity = s.logIDs.connections[connection]?.identity
                s.logIDs.participants[id] = LogIDs.Participant(identity: identity, room: room)
            }
            log(
                .info, resumed ? "resumed" : "joined",
                fields(connection) + [("mode", mode.rawValue), ("others", "\(others.count)")])
        case .error(let code, let text):
            log(.warning, "refused", fields(connection) + [("code", code.rawValue), ("reason", text)])
        case .participantLeft(let id):
            log(.debug, "told \(id) left", fields(connection))
            logDeparture(id)
        default: log(.debug, "sent \(message.typeName)", fields(connection))
        }
    }

    /// `joined` carries `iceServers` when TURN is on: the credentials are
    /// for the identity the token named, made now, so they are not part
    /// of the sans-IO rooms' message.
    private func encode(_ message: ServerMessage, to connection: ConnectionID) throws(RoomProtocolError) -> [UInt8] {
        guard case .joined = message, let iceServers,
            let identity = state.withLock({ $0.logIDs.connections[connection]?.identity })
        else { return try message.jsonBytes() }
        return try message.jsonBytes(iceServers: iceServers(identity))
    }

    static func wallClockSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}

extension AccessTokenError {
    /// A label for the join-failure metric.
    var metricLabel: String {
        switch self {
        case .malformed: "malformed"
        case .tooLarge: "too_large"
        case .unsupportedAlgorithm: "unsupported_algorithm"
        case .unknownKey: "unknown_key"
        case .badSignature: "bad_signature"
        case .expired: "expired"
        case .notYetValid: "not_yet_valid"
        case .wrongRoom: "wrong_room"
        case .missingGrant: "missing_grant"
        }
    }
}
