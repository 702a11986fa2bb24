import COpenSSL

/// The two datagram queues between a `DTLSEndpoint` and OpenSSL.
///
/// OpenSSL 3.0's memory BIO runs datagrams together (FACTS.md), which
/// breaks DTLS: a record layer must see exactly one UDP payload per read,
/// and each flight fragment must leave as its own datagram. This class is
/// the state behind a custom `BIO_METHOD` that keeps the boundaries: a BIO
/// write appends one datagram to `outgoing`, a BIO read pops one datagram
/// from `incoming`.
///
/// The BIO holds one retained reference (through `BIO_set_data`), released
/// by the method's destroy callback when `SSL_free` frees the BIO.
final class DatagramQueues {
    var incoming: [[UInt8]] = []
    var incomingHead = 0
    var outgoing: [[UInt8]] = []
    var outgoingHead = 0

    /// Queues a datagram for OpenSSL to read. A method rather than
    /// `queues.incoming.append` at the call site: Swift 6.3.1 with
    /// -sanitize=thread emits invalid IR (an i8 bitcast to a pointer for
    /// the access) for that append from inside the ~Copyable
    /// `DTLSEndpoint`'s mutating methods, and the compiler aborts
    /// (Scripts/tsan, docs/TESTING.md).
    func receive(_ datagram: [UInt8]) { incoming.append(datagram) }
    /// Where OpenSSL 3.0 keeps its retransmission deadline (`struct timeval`
    /// inside the SSL's DTLS state), learnt from
    /// BIO_CTRL_DGRAM_SET_NEXT_TIMEOUT. Valid while the SSL lives; written
    /// only by `expireOpenSSLTimer()`. See README.md, "Timer".
    var openSSLDeadline: UnsafeMutableRawPointer? = nil
    /// Datagrams OpenSSL has written since creation; tells a new flight (or
    /// a retransmission) apart from silence.
    var written = 0
    /// Reported to OpenSSL through BIO_CTRL_DGRAM_QUERY_MTU and
    /// BIO_CTRL_DGRAM_GET_FALLBACK_MTU.
    let mtu: Int

    init(mtu: Int) { self.mtu = mtu }

    var hasIncoming: Bool { incomingHead < incoming.count }

    func popIncoming() -> [UInt8]? {
        guard incomingHead < incoming.count else { return nil }
        let datagram = incoming[incomingHead]
        incomingHead += 1
        if incomingHead == incoming.count { incoming.removeAll(keepingCapacity: true); incomingHead = 0 }
        return datagram
    }

    func popOutgoing() -> [UInt8]? {
        guard outgoingHead < outgoing.count else { return nil }
        let datagram = outgoing[outgoingHead]
        outgoingHead += 1
        if outgoingHead == outgoing.count { outgoing.removeAll(keepingCapacity: true); outgoingHead = 0 }
        return datagram
    }

    var outgoingCount: Int { outgoing.count - outgoingHead }

    /// Moves OpenSSL's deadline to long ago (1970-01-01T00:00:01Z, not zero,
    /// which would mean "no timer"), so the next DTLSv1_handle_timeout
    /// retransmits. Returns false if OpenSSL never told us where it is.
    func expireOpenSSLTimer() -> Bool {
        guard let deadline = openSSLDeadline else { return false }
        let fields = deadline.assumingMemoryBound(to: timeval.self)
        guard fields.pointee.tv_sec != 0 || fields.pointee.tv_usec != 0 else { return false }
        fields.pointee = timeval(tv_sec: 1, tv_usec: 0)
        return true
    }

    func clearIncoming() { incoming.removeAll(); incomingHead = 0 }
}

/// The process-wide `BIO_METHOD` for `DatagramQueues`. Created once,
/// never freed (OpenSSL keeps a pointer in every BIO made from it).
///
/// `@unchecked Sendable`: the method table is filled in before publication
/// (Swift initialises globals once, atomically) and only read afterwards.
struct DatagramBIOMethod: @unchecked Sendable {
    let method: OpaquePointer?

    static let shared = DatagramBIOMethod()

    private init() {
        // A source/sink BIO; the index only matters for BIO_find_type.
        let index = BIO_get_new_index()
        guard index > 0, let method = BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "swiftlet datagram queue") else {
            self.method = nil
            return
        }
        _ = BIO_meth_set_create(
            method,
            { bio in
                BIO_set_init(bio, 1)
                return 1
            })
        _ = BIO_meth_set_destroy(
            method,
            { bio in
                guard let bio else { return 0 }
                if let data = BIO_get_data(bio) {
                    Unmanaged<DatagramQueues>.fromOpaque(data).release()
                    BIO_set_data(bio, nil)
                }
                return 1
            })
        _ = BIO_meth_set_write(
            method,
            { bio, data, length in
                guard let bio, let queues = queues(of: bio) else { return -1 }
                BIO_clear_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY)
                guard length > 0, let data else { return 0 }
                queues.outgoing.append(Array(UnsafeRawBufferPointer(start: data, count: Int(length))))
                queues.written &+= 1
                return length
            })
        _ = BIO_meth_set_read(
            method,
            { bio, buffer, capacity in
                guard let bio, let queues = queues(of: bio) else { return -1 }
                BIO_clear_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY)
                guard let datagram = queues.popIncoming() else {
                    // No datagram yet: ask OpenSSL to retry later (SSL_ERROR_WANT_READ).
                    BIO_set_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY)
                    return -1
                }
                guard let buffer, capacity > 0 else { return 0 }
                // Datagram semantics: what does not fit is dropped, like recv(2)
                // on a UDP socket with a short buffer.
                let count = min(datagram.count, Int(capacity))
                datagram.withUnsafeBytes { source in
                    guard count > 0, let base = source.baseAddress else { return }
                    UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: count)
                }
                return Int32(count)
            })
        _ = BIO_meth_set_ctrl(
            method,
            { bio, command, _, argument in
                guard let bio, let queues = queues(of: bio) else { return 0 }
                switch command {
                case BIO_CTRL_DGRAM_QUERY_MTU, BIO_CTRL_DGRAM_GET_FALLBACK_MTU:
                    return queues.mtu
                case BIO_CTRL_DGRAM_GET_MTU_OVERHEAD:
                    // Our "link" is the UDP payload: the shell owns the IP and
                    // UDP headers, so DTLS_set_link_mtu(n) means n-byte datagrams.
                    return 0
                case BIO_CTRL_WPENDING:
                    // Every write is complete the moment it is queued.
                    return 0
                case BIO_CTRL_PENDING:
                    return queues.hasIncoming ? queues.incoming[queues.incomingHead].count : 0
                case BIO_CTRL_FLUSH:
                    return 1
                case BIO_CTRL_DGRAM_SET_NEXT_TIMEOUT:
                    // OpenSSL 3.0 passes the address of its own deadline.
                    if let argument { queues.openSSLDeadline = argument }
                    return 0
                case BIO_CTRL_DGRAM_MTU_EXCEEDED, BIO_CTRL_DGRAM_SET_MTU:
                    // We never learn of a too-big datagram from a socket.
                    return 0
                default:
                    return 0
                }
            })
        self.method = method
    }
}

private func queues(of bio: OpaquePointer) -> DatagramQueues? {
    guard let data = BIO_get_data(bio) else { return nil }
    return Unmanaged<DatagramQueues>.fromOpaque(data).takeUnretainedValue()
}

/// A new BIO over `queues`, holding one retained reference to it.
func makeDatagramBIO(_ queues: DatagramQueues) -> OpaquePointer? {
    guard let method = DatagramBIOMethod.shared.method, let bio = BIO_new(method) else { return nil }
    BIO_set_data(bio, Unmanaged.passRetained(queues).toOpaque())
    return bio
}
