/// Groups packets into bursts and yields the send and arrival time deltas
/// between consecutive groups (draft-ietf-rmcat-gcc-02 sections 5.1 and
/// 5.2, "pre-filtering").
///
/// A group is the packets sent within `burstInterval` of its first packet.
/// A packet that arrives within `burstInterval` of the group's last one and
/// sooner after it than it was sent (its propagation delta is negative)
/// belongs to the group too: the path delivered a queued burst at once,
/// which says nothing about the trend. Times are nanoseconds: send times on
/// our clock, arrival times on the receiver's, which only ever appear as
/// differences.
struct InterArrivalDelta: Sendable {
    struct Group: Sendable {
        var firstSend: Int64
        var lastSend: Int64
        var firstArrival: Int64
        var lastArrival: Int64
        var size: Int
    }

    /// The deltas between one completed group and the one before it.
    struct Delta: Equatable, Sendable {
        var sendDelta: Int64
        var arrivalDelta: Int64
        var sizeDelta: Int
        /// Arrival of the newer group's last packet, receiver clock.
        var arrival: Int64
    }

    static let burstInterval: Int64 = 5_000_000
    static let maximumBurstDuration: Int64 = 100_000_000
    /// Arrival deltas this far beyond send deltas mean the receiver clock
    /// jumped (or feedback is garbage): start over.
    static let arrivalOffsetThreshold: Int64 = 3_000_000_000
    static let reorderedResetThreshold = 3

    private(set) var current: Group?
    private(set) var previous: Group?
    private var consecutiveReordered = 0

    mutating func reset() {
        current = nil
        previous = nil
        consecutiveReordered = 0
    }

    /// Feeds one received packet in sending order; returns the deltas when
    /// it closes a group that has a predecessor.
    mutating func add(send: Int64, arrival: Int64, size: Int) -> Delta? {
        guard var group = current else {
            current = Group(firstSend: send, lastSend: send, firstArrival: arrival, lastArrival: arrival, size: size)
            return nil
        }
        // Sent before the group started: a late report of an earlier packet.
        guard send >= group.firstSend else { return nil }
        if belongs(send: send, arrival: arrival, to: group) {
            group.lastSend = max(group.lastSend, send)
            group.lastArrival = max(group.lastArrival, arrival)
            group.size &+= size
            current = group
            return nil
        }
        var result: Delta?
        if let previous {
            let sendDelta = group.lastSend &- previous.lastSend
            let arrivalDelta = group.lastArrival &- previous.lastArrival
            if arrivalDelta &- sendDelta >= Self.arrivalOffsetThreshold
                || sendDelta &- arrivalDelta >= Self.arrivalOffsetThreshold
            {
                reset()
                current = Group(firstSend: send, lastSend: send, firstArrival: arrival, lastArrival: arrival, size: size)
                return nil
            }
            if arrivalDelta < 0 {
                // Groups arrived out of order: skip this pair, and start
                // over when it keeps happening.
                consecutiveReordered += 1
                if consecutiveReordered >= Self.reorderedResetThreshold {
                    reset()
                    current = Group(firstSend: send, lastSend: send, firstArrival: arrival, lastArrival: arrival, size: size)
                    return nil
                }
            } else {
                consecutiveReordered = 0
                result = Delta(
                    sendDelta: sendDelta, arrivalDelta: arrivalDelta, sizeDelta: group.size &- previous.size,
                    arrival: group.lastArrival)
            }
        }
        previous = group
        current = Group(firstSend: send, lastSend: send, firstArrival: arrival, lastArrival: arrival, size: size)
        return result
    }

    private func belongs(send: Int64, arrival: Int64, to group: Group) -> Bool {
        let arrivalDelta = arrival &- group.lastArrival
        let sendDelta = send &- group.lastSend
        if sendDelta == 0 { return true }
        let propagationDelta = arrivalDelta &- sendDelta
        if propagationDelta < 0, arrivalDelta <= Self.burstInterval,
            arrival &- group.firstArrival < Self.maximumBurstDuration
        {
            return true
        }
        return send &- group.firstSend <= Self.burstInterval
    }
}
