import CShim
import Wire

/// Datagrams a worker's engine wants sent, written straight into the slots
/// of a preallocated batch and flushed with one `sendmmsg` when the batch
/// fills or the worker finishes a round. Engines never touch the socket.
public final class TransmitQueue {
    let batch: DatagramBatch
    let descriptor: Int32
    /// The socket's kind (see `UDPSocket`): whether sources are honoured
    /// and IPv4 destinations need mapping.
    let localAddresses: Bool
    let mapIPv4: Bool
    /// Datagrams handed to the kernel, and those it refused or that did not fit.
    public private(set) var sent = 0
    public private(set) var dropped = 0
    /// The worker's ICE-TCP port: packets to a TCP address leave framed on
    /// its connection instead (RFC 6544; nil: the worker has none).
    var streamPort: ICETCPPort?

    init(descriptor: Int32, capacity: Int, slotSize: Int, localAddresses: Bool = false, mapIPv4: Bool = false) {
        self.descriptor = descriptor
        self.localAddresses = localAddresses
        self.mapIPv4 = mapIPv4
        batch = DatagramBatch(capacity: capacity, slotSize: slotSize)
    }

    /// Reserves a slot for a datagram to `address`, leaving from `source`
    /// (the local address the peer reaches us on; nil: the kernel's choice,
    /// and ignored on a bound socket, which has one address anyway);
    /// `write` fills the buffer and returns the length (0 or less: nothing
    /// is sent).
    public func send(
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
        batch.count += 1
    }

    public func send(_ bytes: UnsafeRawBufferPointer, to address: TransportAddress, from source: TransportAddress? = nil) {
        send(to: address, from: source) { slot in
            guard bytes.count <= slot.count else { return -1 }
            slot.copyMemory(from: bytes)
            return bytes.count
        }
    }

    public func send(_ bytes: [UInt8], to address: TransportAddress, from source: TransportAddress? = nil) {
        bytes.withUnsafeBytes { send($0, to: address, from: source) }
    }

    public var pending: Int { batch.count }

    public func flush() {
        let (s, d) = batch.transmit(on: descriptor, mapIPv4: mapIPv4, localAddresses: localAddresses)
        sent += s
        dropped += d
        streamPort?.flushPending()
    }
}
