import Synchronization

/// The server context new connections use, replaceable while the server
/// runs (SIGHUP reload). A connection keeps the context it started with:
/// each `TLSStream` holds its own reference to its `SSL_CTX`.
package final class TLSContextSlot: Sendable {
    private let slot: Mutex<TLSContext>

    package init(_ context: TLSContext) { slot = Mutex(context) }

    package var current: TLSContext { slot.withLock { $0 } }

    package func replace(with context: TLSContext) { slot.withLock { $0 = context } }
}
