import Wire

/// Joined again as a new participant (`joined` with `resumed: false` after
/// the room WebSocket dropped): the room's node died and the room was
/// placed on another node (docs/CLUSTER.md), or the server forgot the
/// participant (its grace period passed, or it restarted). The server
/// holds none of the bot's transports, so the bot starts over as the web
/// client does on a fresh join (`restartMedia`): the old publisher and
/// subscriber transports are dropped without a word (their peer is gone),
/// and publishing and subscribing are negotiated again exactly as at the
/// first join, with the same identity. The media source goes on: the new
/// offer carries the same publication (SSRCs, stream id).
///
/// What was received before is kept for the report, closed at the drop
/// (`BotRecord.startOver`); the time from the drop to the first frame
/// after the rejoin is the recovery.
extension Bot {
    func startOver(droppedAt: Instant, now: Instant) {
        for transport in [publisher, subscriber].compactMap(\.self) { context.unregister(transport) }
        publisher = nil
        subscriber = nil
        offerBuilder = nil
        pendingOffer = nil
        answerBuilder = nil
        publisherFailureCounted = false
        subscriberFailureCounted = false
        announced = [:]
        repairs = RepairStreams()
        keyframeRequests = [:]
        captureTimeIDs = [:]
        arrivals = nil
        videoTrackIDs = []
        layoutSent = []
        record.startOver(droppedAt: droppedAt)
        if record.role.publishes { startPublishing(now: now) }
    }

    /// A packet of the session after a rejoin: recovered at the track's
    /// first complete frame (its sink's), or at this packet without a sink.
    func mediaAfterRejoin(ssrc: SSRC, arrival: Instant) {
        guard let sink = sinks[ssrc] else { return record.recovered(at: arrival) }
        if let at = sink.figures.firstFrameAt { record.recovered(at: at) }
    }
}
