import STUN
import Wire

/// The lite agent's outgoing STUN responses: a bounded FIFO whose entries
/// keep their byte buffers between uses, so a success response written
/// into one (`BindingSuccessResponseWriter`) allocates nothing once the
/// queue has served one check (issue #14: a consent check every few
/// seconds per transport, RFC 7675).
///
/// Storage grows one entry at a time up to `capacity` and is never given
/// back; when full, the oldest datagram is dropped, as an owner that does
/// not drain has lost it anyway.
struct STUNTransmitQueue {
    private struct Entry {
        var buffer: [UInt8]
        var length = 0
        var to: TransportAddress
        var from: TransportAddress?
    }

    let capacity: Int
    private var entries: [Entry] = []
    /// Index of the oldest queued entry.
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    var isEmpty: Bool { count == 0 }

    /// Queues a datagram of at most `maxLength` bytes that `write` puts
    /// into the buffer it is given, returning its length; nil from `write`
    /// queues nothing (and returns false).
    mutating func enqueue(
        to: TransportAddress, from: TransportAddress?, maxLength: Int,
        _ write: (UnsafeMutableRawBufferPointer) -> Int?
    ) -> Bool {
        let index = reserve()
        // Buffers are sized for the longest datagram seen: the first
        // response sizes it, later ones reuse it.
        if entries[index].buffer.count < maxLength {
            entries[index].buffer = [UInt8](repeating: 0, count: max(maxLength, 128))
        }
        guard let length = entries[index].buffer.withUnsafeMutableBytes({ write($0) }) else { return false }
        entries[index].length = length
        entries[index].to = to
        entries[index].from = from
        count += 1
        return true
    }

    /// Queues a copy of `bytes` (error responses, built by the allocating
    /// builder).
    mutating func enqueue(_ bytes: [UInt8], to: TransportAddress, from: TransportAddress?) {
        _ = enqueue(to: to, from: from, maxLength: bytes.count) { out in
            bytes.withUnsafeBytes { out.copyMemory(from: $0) }
            return bytes.count
        }
    }

    /// Removes the oldest datagram and calls `body` with its bytes, valid
    /// only during the call; nil when empty.
    mutating func dequeue<R>(_ body: (UnsafeRawBufferPointer, TransportAddress, TransportAddress?) -> R) -> R? {
        guard count > 0 else { return nil }
        let index = head
        head = (head + 1) % entries.count
        count -= 1
        let entry = entries[index]
        return entry.buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<entry.length]), entry.to, entry.from) }
    }

    /// The index of a free entry at the tail: a new one while below
    /// capacity (inserted at the tail, so the order holds), else the oldest
    /// one's, whose datagram is dropped.
    private mutating func reserve() -> Int {
        if count < entries.count { return (head + count) % entries.count }
        if entries.count < capacity {
            // Full at the current size: insert at the tail position, which
            // in a full ring is `head`; the queued entries move up by one.
            let index = head
            entries.insert(Entry(buffer: [], to: TransportAddress(ipv4: 0, port: 0)), at: index)
            if count > 0 { head += 1 }
            return index
        }
        head = (head + 1) % entries.count
        count -= 1
        return (head + count) % entries.count
    }
}
