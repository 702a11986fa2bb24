import SDP
import Wire

/// An offered `m=application <port> UDP/DTLS/SCTP webrtc-datachannel`
/// section (RFC 8841 section 4.1), accepted on a room participant's
/// publisher transport: data channels ride that transport's DTLS (RFC
/// 8261), bundled with its media (RFC 8843).
package struct DataChannelSection: Equatable, Sendable {
    package var mid: MID
    /// The peer's `a=sctp-port`, 5000 when absent (RFC 8841 section 5.1).
    package var remotePort: UInt16
    /// The peer's `a=max-message-size`: the largest message it accepts; 0
    /// means any size, absent means 64 KiB (RFC 8841 section 6.1).
    package var remoteMaximumMessageSize: UInt64

    /// Our side of the answer (RFC 8841 sections 5 and 6).
    package static let localPort: UInt16 = 5000
    /// What we accept, and so advertise: the SCTP target refuses larger
    /// messages in both directions.
    package static let localMaximumMessageSize: UInt64 = 65_536

    static let proto = "UDP/DTLS/SCTP"
    static let format = "webrtc-datachannel"

    /// The data channel section `m` describes, or nil when it is not one
    /// we accept (another proto or format, rejected by the offerer, not
    /// bundled).
    init?(_ m: MediaDescription, mid: MID, bundle: [MID]) {
        guard m.media == "application", m.proto == Self.proto, m.formats == [Self.format], !m.isRejected,
            bundle.contains(mid)
        else { return nil }
        self.mid = mid
        var port: UInt16 = 5000
        var size: UInt64 = 65_536
        for attribute in m.attributes {
            switch attribute {
            case .sctpPort(let p): port = p
            case .maxMessageSize(let n): size = n
            default: break
            }
        }
        self.remotePort = port
        self.remoteMaximumMessageSize = size
    }

    /// The largest message we may send to this peer: our own limit, or
    /// less when the peer asked for less (0 means no limit of its own).
    package var sendLimit: Int {
        let local = Int(Self.localMaximumMessageSize)
        guard remoteMaximumMessageSize > 0 else { return local }
        return Int(min(remoteMaximumMessageSize, Self.localMaximumMessageSize))
    }
}
