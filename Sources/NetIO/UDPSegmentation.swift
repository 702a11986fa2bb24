import Synchronization

/// A socket's use of UDP generic segmentation offload (UDP_SEGMENT, udp(7),
/// Linux 4.18): several datagrams of one size to one destination leave as
/// one `sendmmsg` message, which the kernel (or the NIC) cuts back into
/// datagrams. It saves the per-datagram trip through the socket layer and
/// the IP stack that dominates forwarding one frame to many subscribers.
/// Owned by one worker's transmit queue; counters are read on its thread.
package struct UDPSegmentation: Sendable, Equatable {
    /// Whether sends on this socket may group datagrams. Starts as asked
    /// and as the kernel allows; turns off for good on the first send the
    /// kernel refuses for segmentation (EIO: no checksum offload on the
    /// route; EINVAL: the segment does not fit the route's MTU).
    package internal(set) var enabled: Bool
    /// Messages sent with a UDP_SEGMENT control message, and the datagrams
    /// they carried.
    package internal(set) var messages = 0
    package internal(set) var segments = 0
    /// 1 once a refused segmented send turned `enabled` off (0 otherwise).
    package internal(set) var fallbacks = 0
    /// `sendmmsg` calls made (segmented or not).
    package internal(set) var sendCalls = 0

    /// udp(7): at most UDP_MAX_SEGMENTS (64 on older kernels) per message.
    static let maxSegments = 64
    /// The whole message must fit one IPv4 datagram: 65535 - 20 - 8.
    static let maxMessageBytes = 65_507
    /// A segment larger than this is sent alone: it must fit a 1500-byte
    /// MTU as IPv6 (1500 - 40 - 8) on any route, or the kernel refuses the
    /// message (EINVAL) rather than fragment it.
    static let maxSegmentBytes = 1452

    package init(enabled: Bool) { self.enabled = enabled }
}

/// A worker's send counters as last published by its transmit queue (once
/// per flush, relaxed stores: no lock, nothing per packet), for `/metrics`
/// on another thread.
package final class UDPSendCounters: Sendable {
    let gsoMessages = Atomic<Int>(0)
    let gsoSegments = Atomic<Int>(0)
    let gsoFallbacks = Atomic<Int>(0)
    let sendCalls = Atomic<Int>(0)
    let gsoEnabled = Atomic<Bool>(false)

    package init() {}

    func publish(_ s: UDPSegmentation) {
        gsoMessages.store(s.messages, ordering: .relaxed)
        gsoSegments.store(s.segments, ordering: .relaxed)
        gsoFallbacks.store(s.fallbacks, ordering: .relaxed)
        sendCalls.store(s.sendCalls, ordering: .relaxed)
        gsoEnabled.store(s.enabled, ordering: .relaxed)
    }

    /// The last published state (any thread).
    package var snapshot: UDPSegmentation {
        var s = UDPSegmentation(enabled: gsoEnabled.load(ordering: .relaxed))
        s.messages = gsoMessages.load(ordering: .relaxed)
        s.segments = gsoSegments.load(ordering: .relaxed)
        s.fallbacks = gsoFallbacks.load(ordering: .relaxed)
        s.sendCalls = sendCalls.load(ordering: .relaxed)
        return s
    }
}
