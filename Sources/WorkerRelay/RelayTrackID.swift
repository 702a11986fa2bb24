/// Names one relayed track between two media workers. The media plane
/// chooses it when it first relays a track from its source worker to a
/// far worker, and both sides resolve it to their own track once, when the
/// relay commands arrive: a relayed packet carries this number, never a
/// room name or a track id string.
package struct RelayTrackID: Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt32
    package init(_ rawValue: UInt32) { self.rawValue = rawValue }
    package var description: String { "relay\(rawValue)" }
}
