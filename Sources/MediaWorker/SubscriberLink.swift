import Wire

/// The worker's state for one subscriber transport as a whole (not per
/// track): the transport-wide sequence numbers of its egress packets, and
/// (with bandwidth estimation) what was sent and what the link carries.
final class SubscriberLink {
    private var transportSequence: UInt16

    init(firstTransportSequenceNumber: UInt16 = 1) {
        transportSequence = firstTransportSequenceNumber
    }

    /// The number the next egress packet carries (16-bit, wrapping;
    /// draft-holmer-rmcat-transport-wide-cc-extensions-01 section 2).
    func nextTransportSequenceNumber() -> UInt16 {
        defer { transportSequence &+= 1 }
        return transportSequence
    }
}
