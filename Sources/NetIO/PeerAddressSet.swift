import Synchronization

/// Addresses whose connections the per-address limits do not count, set
/// at run time: the other nodes of a cluster (docs/CLUSTER.md), whose
/// proxied connections carry many clients each, clients the entry node
/// already limited at its own accept. Replaced whole from any thread (the
/// cluster's refresh); read once per accepted connection under a lock
/// (the accept path, never the media path).
package final class PeerAddressSet: Sendable {
    private let addresses = Mutex<Set<TCPAddressLimiter.Key>>([])

    package init() {}

    package func replace(with peers: [SocketAddress]) {
        let keys = Set(peers.map { TCPAddressLimiter.key(exact: $0) })
        addresses.withLock { $0 = keys }
    }

    package func contains(_ address: SocketAddress?) -> Bool {
        guard let address else { return false }
        let key = TCPAddressLimiter.key(exact: address)
        return addresses.withLock { $0.contains(key) }
    }

    package var count: Int { addresses.withLock { $0.count } }
}
