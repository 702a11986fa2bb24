/// The Redis keys of one cluster, all under one prefix so several clusters
/// (or test runs) can share a Redis.
///
/// - `<prefix>:node:<id>`: a node's `NodeRecord` (JSON), expiring after
///   `ClusterTiming.recordLifetime`; its presence is the node's liveness.
/// - `<prefix>:nodes`: a sorted set of node ids scored by their last write
///   (ms since the Unix epoch): the index readers walk; an id whose record
///   has expired is removed by whoever reads it (no clock is compared).
/// - `<prefix>:room:<room>`: a hash of the room's home, `node` and `epoch`.
/// - `<prefix>:epoch`: the counter every new placement takes its epoch from
///   (`INCR`), so epochs grow across the cluster and a newer one always
///   means a newer placement.
package struct ClusterKeys: Equatable, Sendable {
    package let prefix: String

    package init(prefix: String = "swiftlet") { self.prefix = prefix }

    package var nodePrefix: String { "\(prefix):node:" }
    package func node(_ id: NodeID) -> String { nodePrefix + id.rawValue }
    package var nodeIndex: String { "\(prefix):nodes" }
    package func room(_ name: String) -> String { "\(prefix):room:\(name)" }
    package var epochCounter: String { "\(prefix):epoch" }
}
