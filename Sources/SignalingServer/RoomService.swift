import Foundation
import NetIO
import Rooms
import Signaling
import Synchronization
import Wire

/// Where the rooms layer's effects go: bytes to a signalling connection,
/// a connection to close, a command for the media worker owning a room.
public protocol SignalingOutlet: AnyObject, Sendable {
    func send(_ bytes: [UInt8], to connection: ConnectionID)
    func close(_ connection: ConnectionID)
}

/// The rooms of this server behind a lock, shared by the signalling thread
/// (messages) and the ticker (grace-period timeouts). The lock is taken per
/// signalling message, never on the media path.
public final class RoomService: Sendable {
    struct State {
        var directory: RoomDirectory<RandomIdentifiers>
        var webSockets: Set<ConnectionID> = []
        var joinFailures: [String: Int] = [:]
    }

    let state: Mutex<State>
    let verifier: AccessTokenVerifier
    private let media: @Sendable (MediaCommand) -> Void
    private let outletBox = Mutex<(any SignalingOutlet)?>(nil)
    let log: ServerLog

    public init(
        verifier: AccessTokenVerifier, configuration: RoomDirectory<RandomIdentifiers>.Configuration,
        media: @escaping @Sendable (MediaCommand) -> Void, log: ServerLog = .off
    ) {
        state = Mutex(State(directory: RoomDirectory(configuration: configuration, ids: RandomIdentifiers())))
        self.verifier = verifier
        self.media = media
        self.log = log
    }

    /// Set once the TCP server exists (it needs the service to make handlers).
    public func attach(_ outlet: any SignalingOutlet) { outletBox.withLock { $0 = outlet } }

    // MARK: Input from WebSocket sessions

    func opened(_ connection: ConnectionID) { state.withLock { _ = $0.webSockets.insert(connection) } }

    func received(text: String, on connection: ConnectionID, now: Instant) {
        let message: ClientMessage
        do {
            message = try JSONDecoder().decode(ClientMessage.self, from: Data(text.utf8))
        } catch {
            perform([
                .send(connection, .error(code: .badRequest, message: "not a room protocol message: \(Self.describe(error))"))
            ])
            return
        }
        var join: JoinRequest?
        if case .join(let token, let mode) = message {
            do throws(AccessTokenError) {
                let claims = try verifier.verify(token, room: nil, required: nil, nowSeconds: Self.wallClockSeconds())
                let grants = Grants(
                    publish: claims.grants.publish, subscribe: claims.grants.subscribe, admin: claims.grants.admin)
                join = JoinRequest(identity: claims.subject, room: claims.room, grants: grants, mode: mode)
            } catch {
                state.withLock { $0.joinFailures[error.metricLabel, default: 0] += 1 }
                perform([.send(connection, .error(code: .forbidden, message: error.reason))])
                return
            }
        }
        if case .leave = message {
            log(.info, "\(connection): leave")
        } else {
            log(.debug, "\(connection): received \(message.typeName)")
        }
        let effects: [RoomEffect] = state.withLock { s in
            if let join { return s.directory.join(join, connection: connection, now: now) }
            return s.directory.handle(message, from: connection, now: now)
        }
        perform(effects)
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
        let effects = state.withLock { $0.directory.closedByClient(connection, now: now) }
        if !effects.isEmpty { log(.info, "\(connection): closed with \(code.map(\.description) ?? "-"): leave") }
        perform(effects)
    }

    func closed(_ connection: ConnectionID, now: Instant) {
        log(.debug, "\(connection): WebSocket closed")
        let effects = state.withLock { s in
            s.webSockets.remove(connection)
            return s.directory.disconnected(connection, now: now)
        }
        perform(effects)
    }

    // MARK: Time and lifecycle

    public func tick(now: Instant) {
        let effects = state.withLock { s -> [RoomEffect] in
            guard let d = s.directory.nextDeadline, d <= now else { return [] }
            log(.info, "grace period over: participants who did not reconnect leave")
            return s.directory.handleTimeout(now: now)
        }
        perform(effects)
    }

    public func startDraining() { state.withLock { $0.directory.startDraining() } }
    public var isDraining: Bool { state.withLock { $0.directory.isDraining } }

    public struct Snapshot: Sendable {
        public var rooms: Int
        public var participants: Int
        public var webSockets: Int
        public var joinFailures: [String: Int]
    }

    public var snapshot: Snapshot {
        state.withLock { s in
            Snapshot(
                rooms: s.directory.roomCount, participants: s.directory.participantCount, webSockets: s.webSockets.count,
                joinFailures: s.joinFailures)
        }
    }

    // MARK: Effects

    func perform(_ effects: [RoomEffect]) {
        let outlet = outletBox.withLock { $0 }
        for effect in effects {
            switch effect {
            case .send(let connection, let message):
                logSend(message, to: connection)
                guard let json = try? Self.encoder.encode(message) else { continue }
                outlet?.send(WebSocketFrame(fin: true, opcode: .text, payload: Array(json)).serialize(), to: connection)
            case .close(let connection):
                log(.info, "\(connection): closed, replaced by a newer connection of the same identity")
                outlet?.close(connection)
            case .media(let command):
                log(.debug, "media: \(command.summary)")
                media(command)
            }
        }
    }

    private func logSend(_ message: ServerMessage, to connection: ConnectionID) {
        switch message {
        case .joined(let id, let room, let mode, let others, let resumed):
            log(
                .info,
                "\(connection): \(resumed ? "resumed" : "joined") \(mode.rawValue) room '\(room)' as \(id) with \(others.count) other(s)"
            )
        case .error(let code, let text): log(.info, "\(connection): error \(code.rawValue): \(text)")
        case .participantLeft(let id): log(.debug, "\(connection): told \(id) left")
        default: log(.debug, "\(connection): sent \(message.typeName)")
        }
    }

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes]
        return e
    }()

    static func wallClockSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let c): c.debugDescription
        case DecodingError.keyNotFound(let key, _): "missing '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let c): "wrong type at \(c.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.valueNotFound(_, let c): "missing value at \(c.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "malformed JSON"
        }
    }
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
