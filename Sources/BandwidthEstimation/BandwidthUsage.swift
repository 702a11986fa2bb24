/// The over-use detector's verdict on the path (draft-ietf-rmcat-gcc-02
/// section 5.4): queues growing (over-using), draining (under-using), or
/// neither.
package enum BandwidthUsage: Sendable, Equatable {
    case normal
    case underusing
    case overusing
}
