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
public final class DatagramBatch {
    public let capacity: Int
    public let slotSize: Int
    /// Number of filled slots (after a receive, or as set by the sender).
    public var count: Int = 0

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

    public init(capacity: Int = 32, slotSize: Int = 2048) {
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
    }

    deinit {
        buffers.deallocate(); lengths.deallocate(); addresses.deallocate()
        iovecs.deallocate(); headers.deallocate(); locals.deallocate(); controls.deallocate()
    }

    /// The writable buffer of slot `i`, `slotSize` bytes.
    public func slot(_ i: Int) -> UnsafeMutableRawBufferPointer {
        precondition(i >= 0 && i < capacity, "slot index is ours, not the wire's")
        return UnsafeMutableRawBufferPointer(rebasing: buffers[i * slotSize..<(i + 1) * slotSize])
    }

    /// The datagram in slot `i` (its received or to-be-sent length).
    public func datagram(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: slot(i)[0..<min(lengths[i], slotSize)])
    }

    public func length(_ i: Int) -> Int { lengths[i] }
    public func setLength(_ length: Int, at i: Int) {
        precondition(length >= 0 && length <= slotSize)
        lengths[i] = length
    }

    public func address(_ i: Int) -> SocketAddress? { SocketAddress(storage: addresses[i]) }
    /// Sets slot `i`'s destination and clears its source (the kernel picks).
    public func setAddress(_ address: SocketAddress, at i: Int) {
        addresses[i] = address.storage
        locals[i].ss_family = 0
    }
    public func setAddress(_ address: TransportAddress, at i: Int) { setAddress(SocketAddress(address), at: i) }

    /// After a receive on a socket that reports destinations: the local
    /// address (port 0) datagram `i` was sent to; nil otherwise.
    public func localAddress(_ i: Int) -> TransportAddress? { SocketAddress(storage: locals[i])?.transportAddress }

    /// Before a send: slot `i` leaves from `source` (after `setAddress`).
    /// Used only on sockets that report destinations (wildcard-bound); a
    /// bound socket has one source anyway.
    public func setLocalAddress(_ source: TransportAddress?, at i: Int) {
        if let source { locals[i] = SocketAddress(source).storage } else { locals[i].ss_family = 0 }
    }

    private func control(_ i: Int) -> UnsafeMutableRawPointer { controls + i * controlSpace }

    /// Points the kernel headers at the slots; `forSend` uses each slot's
    /// length and address, otherwise the full slot and room for an address.
    /// `mapIPv4` (a dual-stack socket) rewrites IPv4 destinations as
    /// ::ffff:a.b.c.d; `localAddresses` (a wildcard socket) gives each
    /// received slot room for its destination, and each sent slot with a
    /// source its IP_PKTINFO / IPV6_PKTINFO.
    func prepareHeaders(count n: Int, forSend: Bool, mapIPv4: Bool = false, localAddresses: Bool = false) {
        for i in 0..<n {
            let base = buffers.baseAddress! + i * slotSize
            iovecs[i] = iovec(iov_base: base, iov_len: forSend ? lengths[i] : slotSize)
            if forSend, mapIPv4, Int32(addresses[i].ss_family) == AF_INET, let a = SocketAddress(storage: addresses[i]) {
                addresses[i] = SocketAddress(a.transportAddress, mappedToIPv6: true).storage
            }
            let addressLength =
                forSend
                ? (SocketAddress(storage: addresses[i])?.length ?? 0)
                : socklen_t(MemoryLayout<sockaddr_storage>.size)
            swiftlet_mmsghdr_set(
                headers, UInt32(i), iovecs.baseAddress! + i,
                UnsafeMutableRawPointer(addresses.baseAddress! + i), addressLength)
            guard localAddresses else { continue }
            if !forSend {
                swiftlet_mmsghdr_set_control(headers, UInt32(i), control(i), controlSpace)
            } else if locals[i].ss_family != 0 {
                _ = swiftlet_mmsghdr_set_source(headers, UInt32(i), control(i), locals.baseAddress! + i)
            }
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

    /// Sends the first `count` slots on `descriptor` with as few `sendmmsg`
    /// calls as the kernel allows, then empties the batch. A destination the
    /// kernel refuses costs that one datagram; a full socket buffer (EAGAIN)
    /// drops the rest of the batch rather than spinning: late media is
    /// useless media.
    func transmit(on descriptor: Int32, mapIPv4: Bool = false, localAddresses: Bool = false) -> (sent: Int, dropped: Int) {
        guard count > 0 else { return (0, 0) }
        prepareHeaders(count: count, forSend: true, mapIPv4: mapIPv4, localAddresses: localAddresses)
        var done = 0, sent = 0
        while done < count {
            let n = swiftlet_sendmmsg(descriptor, headers + done * swiftlet_mmsghdr_size(), UInt32(count - done), 0)
            if n > 0 { done += Int(n); sent += Int(n); continue }
            let e = errno
            if n < 0 && e == EINTR { continue }
            if n < 0 && (e == EAGAIN || e == EWOULDBLOCK) { break }
            done += 1
        }
        let total = count
        count = 0
        return (sent, total - sent)
    }
}
