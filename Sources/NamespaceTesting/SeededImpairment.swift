import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A seeded loss-and-delay point for IP packets that a namespace's
/// routing sends through a TUN device: `tc netem` is missing from this
/// kernel (FACTS.md), so the test process does netem's work. One thread,
/// which entered the namespace (setns) before it made the device, reads
/// each packet the kernel routes to the TUN, drops it or holds it for the
/// delay plus a jitter, and writes it back, where the kernel routes it on
/// as if it had arrived on the TUN. Packets leave in the order they came
/// (the jitter never reorders), and nothing is changed in them: addresses
/// and ports stay the two ends' own, so no NAT is needed.
///
/// Seeded: the n-th packet's fate (dropped, or its extra delay) is drawn
/// from SplitMix64 with the seed, so the same seed gives the same
/// decisions in the same order; which packet is the n-th still depends on
/// the processes' timing. `stop()` (also on failure paths) ends the thread
/// and closes the device.
package final class SeededImpairment: @unchecked Sendable {
    package struct Unavailable: Error, CustomStringConvertible { package let description: String }

    /// What passed through so far: packets read from the device, those
    /// dropped, and the mean delay given to the others.
    package struct Figures: Equatable, Sendable, CustomStringConvertible {
        package var packets = 0
        package var dropped = 0
        package var delayedNanoseconds: UInt64 = 0
        package var meanDelayMilliseconds: Double {
            packets > dropped ? Double(delayedNanoseconds) / Double(packets - dropped) / 1e6 : 0
        }
        package var description: String {
            "\(dropped) of \(packets) dropped, mean delay \(String(format: "%.2f", meanDelayMilliseconds)) ms"
        }
    }

    package let device: String
    private let lock = NSLock()
    private var counted = Figures()
    private var stopping = false
    private var fd: Int32 = -1
    private let ready = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var thread: Thread?
    private var openFailure: String?

    /// Makes TUN device `device` in network namespace `namespace` (by its
    /// name under /run/netns) and starts the thread; `lossPerMille` of
    /// every 1000 packets dropped on average, the others held `delay`
    /// plus up to `jitter`. Throws when the namespace cannot be entered or
    /// the device made (no root, no /dev/net/tun).
    package init(
        namespace: String, device: String, seed: UInt64, lossPerMille: Int, delay: Duration, jitter: Duration
    ) throws(Unavailable) {
        precondition((0...1000).contains(lossPerMille) && device.utf8.count < 16)
        self.device = device
        let delayNanoseconds = Self.nanoseconds(delay)
        let jitterNanoseconds = Self.nanoseconds(jitter)
        let thread = Thread { [self] in
            if let problem = openDevice(device, in: namespace) {
                lock.withLock { openFailure = problem }
                ready.signal()
                finished.signal()
                return
            }
            ready.signal()
            run(seed: seed, lossPerMille: UInt64(lossPerMille), delay: delayNanoseconds, jitter: jitterNanoseconds)
            finished.signal()
        }
        thread.name = "impairment \(device)"
        self.thread = thread
        thread.start()
        ready.wait()
        if let failure = lock.withLock({ openFailure }) { throw Unavailable(description: failure) }
    }

    deinit { stop() }

    package var figures: Figures { lock.withLock { counted } }

    /// Ends the thread (within about 20 ms) and closes the device, which
    /// removes it. Packets still held are lost.
    package func stop() {
        let wasRunning = lock.withLock {
            defer { stopping = true }
            return !stopping && thread != nil
        }
        guard wasRunning else { return }
        finished.wait()
        if fd >= 0 { close(fd) }
        fd = -1
    }

    private static func nanoseconds(_ d: Duration) -> UInt64 {
        let (seconds, attoseconds) = d.components
        return UInt64(max(seconds, 0)) * 1_000_000_000 + UInt64(max(attoseconds, 0) / 1_000_000_000)
    }

    private static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

    /// On this thread: enter the namespace, open the TUN (no packet
    /// information header, non-blocking). nil on success.
    private func openDevice(_ device: String, in namespace: String) -> String? {
        let ns = open("/run/netns/\(namespace)", O_RDONLY | O_CLOEXEC)
        defer { if ns >= 0 { close(ns) } }
        guard ns >= 0, NetworkNamespaceEntry.enter(ns) == 0 else {
            return "setns \(namespace): \(String(cString: strerror(errno)))"
        }
        let tun = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard tun >= 0 else { return "open /dev/net/tun: \(String(cString: strerror(errno)))" }
        // struct ifreq: the name (16 bytes), then ifr_flags (a short).
        var request = [UInt8](repeating: 0, count: 40)
        for (i, byte) in device.utf8.enumerated() { request[i] = byte }
        let flags: UInt16 = 0x0001 | 0x1000  // IFF_TUN | IFF_NO_PI
        request[16] = UInt8(flags & 0xFF)
        request[17] = UInt8(flags >> 8)
        let tunSetIff: UInt = 0x4004_54CA  // TUNSETIFF, _IOW('T', 202, int)
        guard request.withUnsafeMutableBytes({ ioctl(tun, tunSetIff, $0.baseAddress!) }) == 0 else {
            let problem = "TUNSETIFF \(device): \(String(cString: strerror(errno)))"
            close(tun)
            return problem
        }
        fd = tun
        return nil
    }

    private func run(seed: UInt64, lossPerMille: UInt64, delay: UInt64, jitter: UInt64) {
        var random = SplitMix64(seed: seed)
        var held: [(due: UInt64, packet: [UInt8])] = []
        var head = 0
        var lastDue: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !lock.withLock({ stopping }) {
            var now = Self.now()
            while head < held.count, held[head].due <= now {
                _ = held[head].packet.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                held[head].packet = []
                head += 1
            }
            if head > 4096 {
                held.removeFirst(head)
                head = 0
            }
            let wait = head < held.count ? Int32(min((held[head].due - now + 999_999) / 1_000_000, 20)) : 20
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, wait) >= 0 || errno == EINTR else { return }
            guard poller.revents & Int16(POLLIN) != 0 else { continue }
            now = Self.now()
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                let drop = random.next() % 1000 < lossPerMille
                var extra: UInt64 = 0
                if !drop, jitter > 0 { extra = random.next() % jitter }
                let due = max(now + delay + extra, lastDue)
                lock.withLock {
                    counted.packets += 1
                    if drop { counted.dropped += 1 } else { counted.delayedNanoseconds += due - now }
                }
                guard !drop else { continue }
                lastDue = due
                held.append((due, Array(buffer[0..<n])))
            }
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a small seeded generator,
/// the same numbers for the same seed on every machine.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
