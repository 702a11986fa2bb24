import RTCP
import Wire

/// The receive side of transport-wide congestion control
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01): what the SFU
/// tells a publisher about the arrival of its packets, so that the
/// publisher's send-side estimate (Chromium's GCC) can grow. Without this
/// feedback a browser's estimate stays at its start value (about 300
/// kbit/s in headless Chromium) and it turns its upper simulcast layers
/// off for want of bandwidth.
///
/// `record` is per packet and allocates nothing: arrivals go into a ring
/// indexed by the transport-wide sequence number. `makeFeedback` runs
/// every `interval` (control plane) and reports every number from the
/// last one reported up to the highest received, lost ones included.
package struct TransportFeedbackRecorder: ~Copyable {
    /// libwebrtc's receiver sends feedback every 50 to 250 ms; 50 ms keeps
    /// the sender's view fresh at a few dozen bytes per feedback.
    package static let defaultInterval: Duration = .milliseconds(50)
    /// Numbers remembered: at 2000 packets/s (about 20 Mbit/s) two seconds.
    package static let capacity = 4096
    /// The longest run of losses reported before the next arrival.
    package static let maximumReportedGap: Int64 = 1000

    package let senderSSRC: SSRC
    package let interval: Duration
    private let slots: UnsafeMutableBufferPointer<Int64>  // extended sequence number of the slot's arrival
    private let arrivals: UnsafeMutableBufferPointer<Int64>  // nanoseconds
    private var unwrapper = SequenceNumberUnwrapper()
    private var highest: Int64?
    private var nextToReport: Int64?
    private var feedbackCount: UInt8 = 0
    package private(set) var nextFeedback: Instant?
    /// Kept between rounds so that a round allocates nothing once they
    /// have grown (issue #14): the numbers to report, the packet being
    /// built, and its bytes.
    private var entries: [TransportCCArrival] = []
    private var packet = TransportLayerCC(
        senderSSRC: SSRC(0), mediaSSRC: SSRC(0), baseSequenceNumber: 0, referenceTime: 0, feedbackPacketCount: 0,
        statuses: [])
    private var writer = ByteWriter(capacity: 256)

    package init(senderSSRC: SSRC, interval: Duration = TransportFeedbackRecorder.defaultInterval) {
        self.senderSSRC = senderSSRC
        self.interval = interval
        slots = .allocate(capacity: Self.capacity)
        slots.initialize(repeating: -1)
        arrivals = .allocate(capacity: Self.capacity)
        arrivals.initialize(repeating: 0)
    }

    deinit {
        slots.deallocate()
        arrivals.deallocate()
    }

    /// One packet carrying transport-wide sequence number `number` arrived.
    package mutating func record(transportSequenceNumber number: UInt16, arrival: Instant) {
        let n = Int64(truncatingIfNeeded: unwrapper.unwrap(number))
        let i = Int(n & Int64(Self.capacity - 1))
        slots[i] = n
        arrivals[i] = arrival.nanoseconds
        if highest.map({ n > $0 }) ?? true { highest = n }
        if nextToReport == nil { nextToReport = n }
        if nextFeedback == nil { nextFeedback = arrival + interval }
    }

    /// The feedback due at `now` (empty before `nextFeedback`, or when
    /// nothing new arrived), addressed to `mediaSSRC` (one of the
    /// publisher's SSRCs; the field is unused by transport-wide feedback
    /// but must be some SSRC of the sender).
    package mutating func makeFeedback(mediaSSRC: SSRC, now: Instant) -> [TransportLayerCC] {
        var out: [TransportLayerCC] = []
        produce(mediaSSRC: mediaSSRC, now: now) { packet, _ in out.append(packet) }
        return out
    }

    /// The same, each packet serialized (a compound of its own) and handed
    /// to `emit`; nothing is allocated once the kept storage has grown.
    /// Returns the number of packets.
    @discardableResult
    package mutating func writeFeedback(
        mediaSSRC: SSRC, now: Instant, emit: (UnsafeRawBufferPointer) -> Void
    ) -> Int {
        var count = 0
        produce(mediaSSRC: mediaSSRC, now: now) { packet, writer in
            writer.removeAll()
            packet.serialize(into: &writer)
            writer.bytes.withUnsafeBytes(emit)
            count += 1
        }
        return count
    }

    /// Builds the due packets one after another in `packet`, handing each
    /// to `use` with the kept writer.
    private mutating func produce(
        mediaSSRC: SSRC, now: Instant, _ use: (borrowing TransportLayerCC, inout ByteWriter) -> Void
    ) {
        guard let due = nextFeedback, now >= due, let highest, var next = nextToReport else { return }
        nextFeedback = now + interval
        guard next <= highest else { return }
        // Numbers older than the ring are gone: start within it.
        next = max(next, highest - Int64(Self.capacity) + 1)
        // A jump of more than `maximumReportedGap` (a sender restarting its
        // counter, not loss) is not reported as thousands of losses, which
        // would collapse the sender's estimate: start at the next arrival.
        var firstReceived = next
        while firstReceived <= highest, slots[Int(firstReceived & Int64(Self.capacity - 1))] != firstReceived {
            firstReceived += 1
        }
        if firstReceived - next > Self.maximumReportedGap { next = firstReceived }
        entries.removeAll(keepingCapacity: true)
        var n = next
        while n <= highest {
            let i = Int(n & Int64(Self.capacity - 1))
            let arrival = slots[i] == n ? Instant(nanoseconds: arrivals[i]) : nil
            entries.append(TransportCCArrival(sequenceNumber: UInt16(truncatingIfNeeded: n), arrival: arrival))
            n += 1
        }
        nextToReport = highest + 1
        packet.senderSSRC = senderSSRC
        packet.mediaSSRC = mediaSSRC
        var start = 0
        while start < entries.count {
            packet.feedbackPacketCount = feedbackCount
            let consumed = TransportLayerCC.build(into: &packet, arrivals: entries[start...])
            guard consumed > 0 else { break }
            feedbackCount &+= 1
            use(packet, &writer)
            start += consumed
        }
    }
}
