import CShim
import Wire

/// Datagrams a worker's engine wants sent, written straight into the slots
/// of a preallocated batch and flushed when the batch fills or the worker
/// finishes a loop turn (once per turn, not per packet or per transport):
/// one `sendmmsg`, with runs to one destination (a video frame to one
/// subscriber) grouped into UDP GSO messages where the kernel has it
/// (`UDPSegmentation`). Engines never touch the socket.
package final class TransmitQueue {
    let batch: DatagramBatch
    let descriptor: Int32
    /// The socket's kind (see `UDPSocket`): whether sources are honoured
    /// and IPv4 destinations need mapping.
    let localAddresses: Bool
    let mapIPv4: Bool
    /// Datagrams handed to the kernel, and those it refused or that did not fit.
    package private(set) var sent = 0
    package private(set) var dropped = 0
    /// The worker's ICE-TCP port: packets to a TCP address leave framed on
    /// its connection instead (RFC 6544; nil: the worker has none).
    var streamPort: ICETCPPort?
    /// GSO on this socket: on when asked for and the kernel knows
    /// UDP_SEGMENT (probed once here), off for good after a refused send.
    package private(set) var segmentation: UDPSegmentation
    /// `segmentation` as last flushed, readable from any thread.
    package let published = UDPSendCounters()
    /// When the datagram the engine is handling now left `recvmmsg` (set
    /// by the worker around each received batch; nil for timers, control
    /// messages and relayed packets): each slot filled meanwhile keeps it,
    /// and the flush records how long the slot waited (`delay`).
    package var ingress: Instant?
    /// Per slot: `ingress` in nanoseconds when it was filled, or
    /// `Int64.min` (nothing to measure). Allocated once with the batch.
    private let stamps: UnsafeMutablePointer<Int64>
    private var stampedSlots = 0
    /// Receive-to-send delay of every stamped datagram flushed so far.
    package private(set) var delay = DurationHistogram(.workerDelay)
    /// `delay` as last flushed, readable from any thread.
    package let publishedDelay = PublishedDelayHistogram()

    /// `segmentation` asks for UDP GSO (`--udp-gso`); the socket decides.
    package init(
        descriptor: Int32, capacity: Int, slotSize: Int, localAddresses: Bool = false, mapIPv4: Bool = false,
        segmentation: Bool = false
    ) {
        self.descriptor = descriptor
        self.localAddresses = localAddresses
        self.mapIPv4 = mapIPv4
        batch = DatagramBatch(capacity: capacity, slotSize: slotSize)
        stamps = .allocate(capacity: capacity)
        stamps.initialize(repeating: .min, count: capacity)
        self.segmentation = UDPSegmentation(enabled: segmentation && descriptor >= 0 && swiftlet_gso_probe(descriptor) == 0)
        published.publish(self.segmentation)
    }

    deinit { stamps.deallocate() }

    /// Reserves a slot for a datagram to `address`, leaving from `source`
    /// (the local address the peer reaches us on; nil: the kernel's choice,
    /// and ignored on a bound socket, which has one address anyway);
    /// `write` fills the buffer and returns the length (0 or less: nothing
    /// is sent).
    package func send(
        to address: TransportAddress, from source: TransportAddress? = nil, _ write: (UnsafeMutableRawBufferPointer) -> Int
    ) {
        if address.transportProtocol == .tcp {
            guard let streamPort else { dropped += 1; return }
            streamPort.send(to: address, maxLength: batch.slotSize, write)
            return
        }
        if batch.count == batch.capacity { flush() }
        let i = batch.count
        let length = write(batch.slot(i))
        guard length > 0 else { return }
        guard length <= batch.slotSize else { dropped += 1; return }
        batch.setLength(length, at: i)
        batch.setAddress(address, at: i)
        if localAddresses { batch.setLocalAddress(source, at: i) }
        if let ingress {
            stamps[i] = ingress.nanoseconds
            stampedSlots += 1
        }
        batch.count += 1
    }

    package func send(_ bytes: UnsafeRawBufferPointer, to address: TransportAddress, from source: TransportAddress? = nil) {
        send(to: address, from: source) { slot in
            guard bytes.count <= slot.count else { return -1 }
            slot.copyMemory(from: bytes)
            return bytes.count
        }
    }

    package func send(_ bytes: [UInt8], to address: TransportAddress, from source: TransportAddress? = nil) {
        bytes.withUnsafeBytes { send($0, to: address, from: source) }
    }

    package var pending: Int { batch.count }

    package func flush() {
        if stampedSlots > 0 { recordDelays() }
        let (s, d) = batch.transmit(
            on: descriptor, mapIPv4: mapIPv4, localAddresses: localAddresses, segmentation: &segmentation)
        if s + d > 0 { published.publish(segmentation) }
        sent += s
        dropped += d
        streamPort?.flushPending()
    }

    /// Just before `sendmmsg`: one clock read for the whole batch.
    private func recordDelays() {
        let now = MonotonicClock.now().nanoseconds
        for i in 0..<batch.count where stamps[i] != .min {
            delay.record(nanoseconds: now &- stamps[i])
            stamps[i] = .min
        }
        stampedSlots = 0
        publishedDelay.publish(delay)
    }
}
