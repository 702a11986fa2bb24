import Synchronization

/// The server context new connections use, replaceable while the server
/// runs (SIGHUP reload). A connection keeps the context it started with:
/// each `TLSStream` holds its own reference to its `SSL_CTX`.
public final class TLSContextSlot: Sendable {
    private let slot: Mutex<TLSContext>

    public init(_ context: TLSContext) { slot = Mutex(context) }

    public var current: TLSContext { slot.withLock { $0 } }

    public func replace(with context: TLSContext) { slot.withLock { $0 = context } }
}
