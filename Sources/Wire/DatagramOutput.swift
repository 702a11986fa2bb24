/// Where a sans-IO engine writes the datagrams it wants sent: the worker
/// shell's transmit queue (NetIO's `TransmitQueue`, flushed with one
/// `sendmmsg`), or a test's recorder. An engine never sees the socket.
///
/// Called per packet on the engine's thread: an implementation takes no
/// lock and allocates nothing in steady state.
package protocol DatagramOutput: AnyObject {
    /// Reserves a slot for a datagram to `address`, leaving from `source`
    /// (the local address the peer reaches us on; nil: the shell's
    /// choice); `write` fills the slot in place and returns the length
    /// (0 or less: nothing is sent). The slot is valid only during `write`.
    func send(
        to address: TransportAddress, from source: TransportAddress?, _ write: (UnsafeMutableRawBufferPointer) -> Int)
    /// Copies `bytes` into a slot and queues it.
    func send(_ bytes: UnsafeRawBufferPointer, to address: TransportAddress, from source: TransportAddress?)
}

extension DatagramOutput {
    package func send(_ bytes: [UInt8], to address: TransportAddress, from source: TransportAddress?) {
        bytes.withUnsafeBytes { send($0, to: address, from: source) }
    }
}
