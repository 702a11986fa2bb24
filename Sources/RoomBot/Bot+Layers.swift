import BotMedia
import RoomProtocol
import Wire

/// What subscribers and participants ask of each received video track's
/// layers: `--switch-every` cycles them, `--layout` fixes them to a tile
/// size.
extension Bot {
    /// `--switch-every`: every period, each video track's `maxLayer` steps
    /// through 0, 1, 2 (0, 1, 2, 1, 0, ...); the sink times the first
    /// complete frame at the new layer's height.
    func cycleLayers(now: Instant) {
        guard let period = context.options.switchEvery, record.role.subscribes, !context.options.audioOnly,
            context.options.simulcast, record.subscriberConnectedAt != nil, record.firstMediaAt != nil
        else { return }
        guard let due = nextSwitchAt else {
            nextSwitchAt = now + .nanoseconds(Int64(period * 1e9))
            return
        }
        guard now >= due else { return }
        nextSwitchAt = due + .nanoseconds(Int64(period * 1e9))
        let cycle = [0, 1, 2, 1]
        switchStep += 1
        let layer = cycle[switchStep % cycle.count]
        let heights: [UInt16] = VideoClipPreset.simulcast.map { UInt16($0.height) }
        for id in videoTrackIDs { send(.setPreference(trackID: id, preference: ReceivePreference(maxLayer: layer))) }
        record.switchesRequested += videoTrackIDs.count
        for (ssrc, track) in announced where track.kind == .video {
            sinks[ssrc]?.switchRequested(height: heights[layer], at: now)
        }
    }

    /// `--layout`: once per video track, as soon as it is known, the
    /// tile width of its place in the layout.
    func applyLayout() {
        guard let layout = context.options.layout, record.role.subscribes, !usesWHEP else { return }
        for (index, id) in videoTrackIDs.enumerated() where !layoutSent.contains(id) {
            layoutSent.insert(id)
            send(.setPreference(trackID: id, preference: ReceivePreference(maxWidth: layout.maxWidth(tile: index))))
        }
    }
}
