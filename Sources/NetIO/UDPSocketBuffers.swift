import CShim

/// The kernel buffer sizes a UDP socket asks for (socket(7) SO_RCVBUF,
/// SO_SNDBUF). The kernel's default, about 208 KiB, holds about a
/// hundred datagrams: a worker's one socket takes every publisher's media
/// and every subscriber's feedback, and while it fans out one video frame
/// to tens of subscribers (milliseconds) the next frames queue there. At
/// 12 Mbit/s into 10 viewers the default dropped about 4 % of the input
/// (docs/PERFORMANCE.md, "Socket buffers").
package struct UDPSocketBuffers: Sendable, Equatable {
    /// Bytes of datagrams waiting to be read; 0: the kernel's default.
    package var receive: Int
    /// Bytes of datagrams waiting to leave (a fanned-out burst); 0: the
    /// kernel's default.
    package var send: Int

    /// 4 MiB each: about 3,000 full datagrams, a third of a second of
    /// 100 Mbit/s. Past net.core.rmem_max / wmem_max only with
    /// CAP_NET_ADMIN (the kernel caps it otherwise: `UDPSocket.setBuffers`
    /// reports what it got).
    package static let standard = UDPSocketBuffers(receive: 4 << 20, send: 4 << 20)
    /// What a size option may ask for (besides 0).
    package static let allowed = 65_536...(256 << 20)
    /// The kernel's defaults, untouched.
    package static let kernelDefaults = UDPSocketBuffers(receive: 0, send: 0)

    package init(receive: Int, send: Int) {
        self.receive = receive
        self.send = send
    }
}

extension UDPSocket {
    /// Asks for `buffers` (a size of 0 is left as it is) and returns what
    /// the kernel now uses (nil where it refused outright; the socket keeps
    /// its old sizes).
    package func setBuffers(_ buffers: UDPSocketBuffers) -> UDPSocketBuffers? {
        func size(_ n: Int) -> Int32 {
            // 0 asks for nothing: the helpers then only read the size.
            n == 0 ? 0 : Int32(min(max(n, UDPSocketBuffers.allowed.lowerBound), UDPSocketBuffers.allowed.upperBound))
        }
        let receive = swiftlet_set_receive_buffer(descriptor, size(buffers.receive))
        let send = swiftlet_set_send_buffer(descriptor, size(buffers.send))
        guard receive >= 0, send >= 0 else { return nil }
        return UDPSocketBuffers(receive: Int(receive), send: Int(send))
    }

    /// Datagrams the kernel dropped on this socket because its receive
    /// buffer was full, since it was opened (nil where the kernel does not
    /// say). Any thread: it reads the kernel's counter only.
    package func receiveBufferDrops() -> UInt64? {
        let drops = swiftlet_socket_receive_drops(descriptor)
        return drops >= 0 ? UInt64(drops) : nil
    }
}
