import MediaRouter
import NetIO
import Wire
import WorkerRelay

// The shell's relay entry points: the media plane's rings call them on the
// worker thread; each hands its input to the router with the worker's
// transmit queue as the output.

extension RoomMediaEngine {
    /// Carries out one of the media plane's commands for this worker.
    package func execute(_ command: WorkerCommand, now: Instant, transmit: TransmitQueue) {
        router.execute(command, now: now, output: transmit)
    }

    /// Once, on the worker thread, before any relay command: the links to
    /// every other worker (index: the far worker's; nil at our own index).
    /// `sources[w]` carries our tracks' packets to worker `w`,
    /// `feedback[w]` our feedback about tracks whose source is worker `w`.
    package func connectRelays(sources: [(any RelaySourceLink)?], feedback: [(any RelayFeedbackLink)?]) {
        router.connectRelays(sources: sources, feedback: feedback)
    }

    /// A relayed packet from worker `from`, drained from its ring (valid
    /// only during the call).
    package func receiveRelayedMedia(
        _ track: RelayTrackID, layer: Int, isRetransmission: Bool, packet: UnsafeRawBufferPointer, from: Int, now: Instant,
        transmit: TransmitQueue
    ) {
        router.receiveRelayedMedia(
            track, layer: layer, isRetransmission: isRetransmission, packet: packet, from: from, now: now, output: transmit)
        publishSnapshot(now: now)
    }

    package func receiveRelayedSenderReport(
        _ track: RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32, from: Int, now: Instant
    ) {
        router.receiveRelayedSenderReport(track, layer: layer, ntp: ntp, rtpTimestamp: rtpTimestamp, from: from, now: now)
    }

    package func receiveRelayedLayerBitrates(_ track: RelayTrackID, _ rates: RelayedLayerBitrates, from: Int, now: Instant) {
        router.receiveRelayedLayerBitrates(track, rates, from: from, now: now)
    }

    /// Feedback from worker `from` about a track whose source is here.
    package func receiveRelayFeedback(_ feedback: RelayFeedback, from: Int, now: Instant, transmit: TransmitQueue) {
        router.receiveRelayFeedback(feedback, from: from, now: now, output: transmit)
        publishSnapshot(now: now)
    }
}
