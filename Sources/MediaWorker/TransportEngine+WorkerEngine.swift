import MediaRouter
import NetIO
import Wire

/// The transport engine alone as a worker's engine (tests and the
/// transport benchmark echo media with it): the worker's transmit queue
/// is its output.
extension TransportEngine: WorkerEngine {
    /// Runs on the worker thread with the engine and the current time.
    package typealias Control = @Sendable (TransportEngine, Instant, TransmitQueue) -> Void

    package func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, to local: TransportAddress?,
        now: Instant, transmit: TransmitQueue
    ) {
        receive(datagram, from: source, to: local, now: now, output: transmit)
    }

    package func control(_ message: Control, now: Instant, transmit: TransmitQueue) {
        message(self, now, transmit)
        flushAll(output: transmit)
    }

    package func timeout(now: Instant, transmit: TransmitQueue) { timeout(now: now, output: transmit) }
}
