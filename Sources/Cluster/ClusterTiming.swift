/// How often a node rewrites its record and how long the record lives
/// (issue #15: every 2 s, 6 s expiry): a node is declared dead between 4
/// and 6 s after its last write, and one slow refresh does not kill it.
package struct ClusterTiming: Equatable, Sendable {
    package var refreshInterval: Duration
    package var recordLifetime: Duration
    /// A command to Redis that takes longer fails (a join then gets a 503
    /// instead of hanging).
    package var commandTimeout: Duration
    /// How often a node exchanges the parts of its rooms that span nodes
    /// (the cascade): a participant or track on one node is seen on the
    /// others within about two of these.
    package var cascadeInterval: Duration

    package init(
        refreshInterval: Duration = .seconds(2), recordLifetime: Duration = .seconds(6),
        commandTimeout: Duration = .milliseconds(1500), cascadeInterval: Duration = .milliseconds(250)
    ) {
        self.cascadeInterval = cascadeInterval
        self.refreshInterval = refreshInterval
        self.recordLifetime = recordLifetime
        self.commandTimeout = commandTimeout
    }

    package var recordLifetimeMilliseconds: Int64 {
        recordLifetime.components.seconds * 1000 + recordLifetime.components.attoseconds / 1_000_000_000_000_000
    }
}
