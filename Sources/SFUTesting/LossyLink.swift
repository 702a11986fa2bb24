import Wire

/// One direction of a simulated path: a bottleneck queue draining at
/// `capacity` (none: infinite), then Gilbert-Elliott loss, then a fixed
/// one-way `delay`. Datagrams keep their order. A full queue drops at the
/// tail (`queueLimit` of queueing delay), as a router's FIFO does.
/// Deterministic for a given seed and sequence of sends.
package struct LossyLink {
    package struct Datagram {
        package var bytes: [UInt8]
        package var from: TransportAddress
        package var to: TransportAddress
        package var deliverAt: Instant
    }

    package var delay: Duration
    package var loss: GilbertElliottLoss?
    /// The bottleneck rate; nil for none. May change during a run.
    package var capacity: Bitrate?
    /// Most queueing delay the bottleneck holds before it drops.
    package var queueLimit: Duration
    package private(set) var sent = 0
    package private(set) var lost = 0
    package private(set) var queueDrops = 0
    private var inFlight: [Datagram] = []
    private var head = 0
    /// When the bottleneck finishes sending what it holds.
    private var busyUntil: Instant = .zero

    package init(
        delay: Duration, loss: GilbertElliottLoss? = nil, capacity: Bitrate? = nil,
        queueLimit: Duration = .milliseconds(300)
    ) {
        self.delay = delay
        self.loss = loss
        self.capacity = capacity
        self.queueLimit = queueLimit
    }

    package mutating func send(_ bytes: [UInt8], from: TransportAddress, to: TransportAddress, now: Instant) {
        sent += 1
        var leaves = now
        if let capacity, capacity.bitsPerSecond > 0 {
            let start = max(now, busyUntil)
            if start - now > queueLimit {
                queueDrops += 1
                return
            }
            // IP and UDP headers count against the bottleneck too.
            let bits = Int64(bytes.count + 28) * 8
            busyUntil = start + .nanoseconds(bits * 1_000_000_000 / Int64(capacity.bitsPerSecond))
            leaves = busyUntil
        }
        if loss?.nextIsLost() == true {
            lost += 1
            return
        }
        inFlight.append(Datagram(bytes: bytes, from: from, to: to, deliverAt: leaves + delay))
    }

    /// The next datagram due at or before `now`, in send order.
    package mutating func receive(now: Instant) -> Datagram? {
        guard head < inFlight.count, inFlight[head].deliverAt <= now else { return nil }
        let d = inFlight[head]
        head += 1
        if head > 1024 {
            inFlight.removeFirst(head)
            head = 0
        }
        return d
    }

    package var nextDelivery: Instant? { head < inFlight.count ? inFlight[head].deliverAt : nil }
}
