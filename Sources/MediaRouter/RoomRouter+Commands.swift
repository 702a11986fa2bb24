import Forwarding
import ICE
import Negotiation
import PeerSession
import RTPStreams
import RoomProtocol
import Rooms
import SCTP
import Wire

extension RoomRouter {
    /// Carries out one decision of the rooms layer. Runs on the worker
    /// thread (post it through the mailbox). Commands naming a transport or
    /// track this worker does not have are ignored and counted
    /// (`commandsIgnored`): the rooms layer may race a departure.
    package func execute(_ command: MediaCommand, now: Instant, output: any DatagramOutput) {
        if reportScheduler == nil {
            reportScheduler = ReportScheduler(
                interval: configuration.reportInterval, random: ReportJitter(seed: configuration.reportSeed), now: now)
        }
        switch command {
        case .openTransport(_, let worker, let participant, let role, let local, let remote):
            guard worker == workerIndex else { return ignored() }
            openTransport(participant: participant, role: role, local: local, remote: remote, now: now, output: output)
        case .setRemote(_, let participant, let role, let remote):
            guard let id = transportID(of: participant, role: role), let t = transports.transport(id) else { return ignored() }
            t.setRemoteParameters(credentials: remote.credentials, fingerprints: remote.fingerprints, now: now)
        case .addIncomingTrack(let room, let participant, let trackID, let description):
            addIncomingTrack(TrackKey(room: room, trackID: trackID), publisher: participant, description: description)
            scheduleHousekeeping(now: now)
        case .removeIncomingTrack(let room, _, let trackID):
            guard let track = tracks[TrackKey(room: room, trackID: trackID)] else { return ignored() }
            removeTrack(track)
        case .forward(let room, let trackID, let subscriber, let outgoingTrack):
            forward(TrackKey(room: room, trackID: trackID), to: subscriber, as: outgoingTrack, now: now)
        case .stopForward(let room, let trackID, let subscriber):
            let key = SubscriptionKey(track: TrackKey(room: room, trackID: trackID), subscriber: subscriber)
            guard let s = subscriptions[key] else { return ignored() }
            removeSubscription(s)
        case .setPreference(let room, let trackID, let subscriber, let preference):
            let key = SubscriptionKey(track: TrackKey(room: room, trackID: trackID), subscriber: subscriber)
            guard let s = subscriptions[key] else { return ignored() }
            s.preference = preference
            if let id = s.transportID { links[id]?.allocationNeeded = true }
        case .releaseParticipant(_, let participant):
            release(participant, now: now, output: output)
        case .enableDataChannels(let room, let participant, let remotePort):
            guard let id = transportID(of: participant, role: .publisher), let t = transports.transport(id) else {
                return ignored()
            }
            var sctp = SCTPConfiguration()
            sctp.remotePort = remotePort
            dataChannelRooms[participant] = room
            t.enableDataChannels(sctp, now: now)
        case .sendData(_, let participant, let label, let isText, let payload):
            sendData(to: participant, label: label, isText: isText, payload: payload, now: now)
        case .setTrackMuted(let room, _, let trackID, let muted):
            guard let track = tracks[TrackKey(room: room, trackID: trackID)] else { return ignored() }
            let wasMuted = track.isMuted
            track.isMuted = muted
            // Subscribers' decoders start again from a keyframe.
            if wasMuted, !muted, track.isVideo {
                for layer in track.layers.indices { requestKeyframe(.pli, of: track, layer: layer, now: now, output: output) }
            }
        case .addRemoteTrack, .addRemoteSink, .removeRemoteSink:
            // The media plane turns these into relay commands
            // (`RoomSpanPlanner`): a worker never runs them as such.
            ignored()
        }
    }

    func ignored() { counters.commandsIgnored &+= 1 }

    /// The drain's end (or a stop): every transport sends DTLS close_notify
    /// (RFC 5246 section 7.2.1; RFC 6347 section 4.1) to its peer and is
    /// forgotten; tracks and subscriptions stay until the engine goes.
    /// Returns how many transports were closed.
    @discardableResult
    package func closeAllTransports(now: Instant, output: any DatagramOutput) -> Int {
        let ids = transportKeys.keys.sorted { $0.rawValue < $1.rawValue }
        for id in ids { closeTransport(id, now: now, output: output) }
        return ids.count
    }

    private func openTransport(
        participant: ParticipantID, role: TransportRole, local: ICECredentials, remote: RemoteTransportParameters?,
        now: Instant, output: any DatagramOutput
    ) {
        let key = TransportKey(participant: participant, role: role)
        // A second open for the same participant and role replaces the
        // first (a renegotiation from scratch).
        if let old = transportIDs[key] { closeTransport(old, now: now, output: output) }
        guard
            let t = try? PeerTransport(
                role: .server, certificate: certificate, localCredentials: local,
                configuration: configuration.transport, now: now)
        else { return ignored() }
        if let remote { t.setRemoteParameters(credentials: remote.credentials, fingerprints: remote.fingerprints, now: now) }
        let id = TransportID(nextTransportNumber)
        nextTransportNumber &+= 1
        transports.add(t, id: id)
        transportIDs[key] = id
        transportKeys[id] = key
        switch role {
        case .publisher:
            if let routes = publisherRoutes[participant] { routesByTransport[id] = routes }
        case .subscriber:
            let sink = SubscriberSink(
                id: id, transport: t, link: SubscriberLink(),
                extensionIDs: remote?.egressHeaderExtensions ?? egressExtensionIDs)
            links[id] = sink.link
            sinks[id] = sink
            for s in subscriptions.values where s.key.subscriber == participant { attach(s, to: sink) }
        }
    }

    private func closeTransport(_ id: TransportID, now: Instant, output: any DatagramOutput) {
        if let t = transports.transport(id) {
            t.close(now: now)
            transports.flush(id, t, output: output)
        }
        transports.remove(id)
        forget(id)
    }

    private func addIncomingTrack(_ key: TrackKey, publisher: ParticipantID, description: PublishedTrackDescription) {
        if let old = tracks[key] { removeTrack(old) }
        let track = IncomingTrack(
            key: key, publisher: publisher, description: description, senderSSRC: configuration.reporterSSRC,
            keyframeInterval: configuration.keyframeRequestInterval)
        tracks[key] = track
        let routes: PublisherRoutes
        if let r = publisherRoutes[publisher] {
            routes = r
        } else {
            routes = PublisherRoutes(reporterSSRC: configuration.reporterSSRC)
            publisherRoutes[publisher] = routes
            if let id = transportID(of: publisher, role: .publisher) { routesByTransport[id] = routes }
        }
        routes.add(track)
    }

    /// Removing a track ends its forwardings; a republished track is
    /// forwarded again by new `forward` commands.
    func removeTrack(_ track: IncomingTrack) {
        for s in track.subscriptions { removeSubscription(s) }
        if tracks[track.key] === track { tracks[track.key] = nil }
        for sink in track.relaySinks where relaySinkTracks[sink.key] === track { relaySinkTracks[sink.key] = nil }
        track.relaySinks.removeAll()
        if let source = track.relaySource {
            if relayedTracks[source] === track { relayedTracks[source] = nil }
        } else {
            publisherRoutes[track.publisher]?.remove(track)
        }
    }

    private func forward(_ key: TrackKey, to subscriber: ParticipantID, as outgoingTrack: OutgoingTrack, now: Instant) {
        guard let track = tracks[key] else { return ignored() }
        let subscriptionKey = SubscriptionKey(track: key, subscriber: subscriber)
        if let old = subscriptions[subscriptionKey] { removeSubscription(old) }
        let s = Subscription(key: subscriptionKey, outgoing: outgoingTrack, sink: nil)
        s.track = track
        attach(s, to: transportID(of: subscriber, role: .subscriber).flatMap { sinks[$0] })
        // Until the first allocation round (within 50 ms) and before any
        // layer is measured, the best layer the publisher sends.
        s.simulcast?.setTarget(MediaLayer(spatial: track.layers.count - 1), now: now)
        if let id = s.transportID { links[id]?.allocationNeeded = true }
        subscriptions[subscriptionKey] = s
        track.subscriptions.append(s)
    }

    func removeSubscription(_ s: Subscription) {
        subscriptions[s.key] = nil
        attach(s, to: nil)
        s.track?.subscriptions.removeAll { $0 === s }
    }

    private func release(_ participant: ParticipantID, now: Instant, output: any DatagramOutput) {
        for role in [TransportRole.publisher, .subscriber] {
            if let id = transportID(of: participant, role: role) { closeTransport(id, now: now, output: output) }
        }
        for track in tracks.values where track.publisher == participant { removeTrack(track) }
        for s in subscriptions.values where s.key.subscriber == participant { removeSubscription(s) }
        publisherRoutes[participant] = nil
        dataChannelRooms[participant] = nil
    }
}
