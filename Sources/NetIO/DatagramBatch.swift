import CShim
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// Preallocated buffers for one `recvmmsg`/`sendmmsg` batch: `capacity`
/// slots of `slotSize` bytes, each with its peer address, its local address
/// (where it arrived, or where it must leave from, on a wildcard-bound
/// socket) and room for the control message that carries it. Allocated
/// once; receiving and sending reuse the same memory, so the media path
/// allocates nothing per packet. Owned by one worker thread.
package final class DatagramBatch {
    package let capacity: Int
    package let slotSize: Int
    /// Number of filled slots (after a receive, or as set by the sender).
    package var count: Int = 0

    let buffers: UnsafeMutableRawBufferPointer
    let lengths: UnsafeMutableBufferPointer<Int>
    let addresses: UnsafeMutableBufferPointer<sockaddr_storage>
    let iovecs: UnsafeMutableBufferPointer<iovec>
    let headers: UnsafeMutableRawPointer
    /// Per slot: the destination a datagram arrived on, or the source it
    /// must leave from; `ss_family` 0 means none.
    let locals: UnsafeMutableBufferPointer<sockaddr_storage>
    /// Per slot, `controlSpace` bytes for IP_PKTINFO / IPV6_PKTINFO.
    let controls: UnsafeMutableRawPointer
    let controlSpace: Int
    /// Sending (`DatagramBatch+Segmentation`): the slots in message order,
    /// where each message starts in that order (one more entry than
    /// messages), the planner's groups, and per message room for a source
    /// and a UDP_SEGMENT control message.
    let order: UnsafeMutableBufferPointer<Int32>
    let messageStart: UnsafeMutableBufferPointer<Int32>
    let nextInGroup: UnsafeMutableBufferPointer<Int32>
    let groupHead: UnsafeMutableBufferPointer<Int32>
    let groupTail: UnsafeMutableBufferPointer<Int32>
    let groupCount: UnsafeMutableBufferPointer<Int32>
    let groupBytes: UnsafeMutableBufferPointer<Int32>
    let groupSegment: UnsafeMutableBufferPointer<Int32>
    let groupClosed: UnsafeMutableBufferPointer<Bool>
    let messageControls: UnsafeMutableRawPointer
    let messageControlSpace: Int
    /// Open-addressed map from a route to its latest group, valid where
    /// `routeStamp` equals `routeGeneration` (bumped per send, so nothing
    /// is cleared): at least twice `capacity` entries, so a probe ends.
    let routeGroup: UnsafeMutableBufferPointer<Int32>
    let routeStamp: UnsafeMutableBufferPointer<UInt32>
    var routeGeneration: UInt32 = 0

    package init(capacity: Int = 32, slotSize: Int = 2048) {
        precondition(capacity > 0 && slotSize > 0)
        self.capacity = capacity
        self.slotSize = slotSize
        buffers = .allocate(byteCount: capacity * slotSize, alignment: 16)
        buffers.initializeMemory(as: UInt8.self, repeating: 0)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0)
        addresses = .allocate(capacity: capacity)
        addresses.initialize(repeating: sockaddr_storage())
        iovecs = .allocate(capacity: capacity)
        iovecs.initialize(repeating: iovec())
        headers = .allocate(byteCount: capacity * swiftlet_mmsghdr_size(), alignment: 16)
        locals = .allocate(capacity: capacity)
        locals.initialize(repeating: sockaddr_storage())
        controlSpace = swiftlet_pktinfo_space()
        controls = .allocate(byteCount: capacity * controlSpace, alignment: 16)
        controls.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * controlSpace)
        order = .allocate(capacity: capacity)
        messageStart = .allocate(capacity: capacity + 1)
        nextInGroup = .allocate(capacity: capacity)
        groupHead = .allocate(capacity: capacity)
        groupTail = .allocate(capacity: capacity)
        groupCount = .allocate(capacity: capacity)
        groupBytes = .allocate(capacity: capacity)
        groupSegment = .allocate(capacity: capacity)
        for buffer in [order, messageStart, nextInGroup, groupHead, groupTail, groupCount, groupBytes, groupSegment] {
            buffer.initialize(repeating: 0)
        }
        groupClosed = .allocate(capacity: capacity)
        groupClosed.initialize(repeating: false)
        messageControlSpace = swiftlet_gso_control_space()
        messageControls = .allocate(byteCount: capacity * messageControlSpace, alignment: 16)
        messageControls.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * messageControlSpace)
        var tableSize = 16
        while tableSize < 2 * capacity { tableSize *= 2 }
        routeGroup = .allocate(capacity: tableSize)
        routeGroup.initialize(repeating: 0)
        routeStamp = .allocate(capacity: tableSize)
        routeStamp.initialize(repeating: 0)
    }

    deinit {
        buffers.deallocate(); lengths.deallocate(); addresses.deallocate()
        iovecs.deallocate(); headers.deallocate(); locals.deallocate(); controls.deallocate()
        for buffer in [order, messageStart, nextInGroup, groupHead, groupTail, groupCount, groupBytes, groupSegment] {
            buffer.deallocate()
        }
        groupClosed.deallocate(); messageControls.deallocate(); routeGroup.deallocate(); routeStamp.deallocate()
    }

    /// The writable buffer of slot `i`, `slotSize` bytes.
    package func slot(_ i: Int) -> UnsafeMutableRawBufferPointer {
        precondition(i >= 0 && i < capacity, "slot index is ours, not the wire's")
        return UnsafeMutableRawBufferPointer(rebasing: buffers[i * slotSize..<(i + 1) * slotSize])
    }

    /// The datagram in slot `i` (its received or to-be-sent length).
    package func datagram(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: slot(i)[0..<min(lengths[i], slotSize)])
    }

    package func length(_ i: Int) -> Int { lengths[i] }
    package func setLength(_ length: Int, at i: Int) {
        precondition(length >= 0 && length <= slotSize)
        lengths[i] = length
    }

    package func address(_ i: Int) -> SocketAddress? { SocketAddress(storage: addresses[i]) }
    /// Sets slot `i`'s destination and clears its source (the kernel picks).
    package func setAddress(_ address: SocketAddress, at i: Int) {
        addresses[i] = address.storage
        locals[i].ss_family = 0
    }
    package func setAddress(_ address: TransportAddress, at i: Int) { setAddress(SocketAddress(address), at: i) }

    /// After a receive on a socket that reports destinations: the local
    /// address (port 0) datagram `i` was sent to; nil otherwise.
    package func localAddress(_ i: Int) -> TransportAddress? { SocketAddress(storage: locals[i])?.transportAddress }

    /// Before a send: slot `i` leaves from `source` (after `setAddress`).
    /// Used only on sockets that report destinations (wildcard-bound); a
    /// bound socket has one source anyway.
    package func setLocalAddress(_ source: TransportAddress?, at i: Int) {
        if let source { locals[i] = SocketAddress(source).storage } else { locals[i].ss_family = 0 }
    }

    private func control(_ i: Int) -> UnsafeMutableRawPointer { controls + i * controlSpace }

    /// Before `recvmmsg`: points the kernel headers at the whole slots,
    /// with room for each sender's address, and (`localAddresses`, a
    /// wildcard socket) for the control message that carries where each
    /// datagram arrived. Sending builds its headers in `transmit`
    /// (`DatagramBatch+Segmentation`), one message per group of slots.
    func prepareReceiveHeaders(localAddresses: Bool) {
        for i in 0..<capacity {
            iovecs[i] = iovec(iov_base: buffers.baseAddress! + i * slotSize, iov_len: slotSize)
            swiftlet_mmsghdr_set(
                headers, UInt32(i), iovecs.baseAddress! + i, UnsafeMutableRawPointer(addresses.baseAddress! + i),
                socklen_t(MemoryLayout<sockaddr_storage>.size))
            if localAddresses { swiftlet_mmsghdr_set_control(headers, UInt32(i), control(i), controlSpace) }
        }
    }

    /// After `recvmmsg` filled `n` slots: each one's destination from its
    /// control message, or none.
    func readLocalAddresses(count n: Int, enabled: Bool) {
        for i in 0..<n {
            if !enabled || swiftlet_mmsghdr_destination(headers, UInt32(i), locals.baseAddress! + i) == 0 {
                locals[i].ss_family = 0
            }
        }
    }
}
