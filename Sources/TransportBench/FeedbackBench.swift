import BandwidthEstimation
import Foundation
import Glibc
import RTCP
import Wire

/// Transport-cc feedback cost on the worker's path (issue #12, defect 3):
/// parse a decrypted compound, then walk each feedback through a send-side
/// estimator and a probe controller as `SubscriberLink` does. Two loads:
/// a hostile 1200-byte compound of 30 feedbacks each claiming 65,535
/// statuses, and the honest feedback of a 20-packet interval.
struct FeedbackBench {
    let iterations: Int

    struct Result {
        var hostileNanoseconds: Double
        var hostileExpandedNanoseconds: Double
        var honestNanoseconds: Double
        var honestAllocations: Double?
        /// The walk alone (estimator and prober on a parsed feedback).
        var walkAllocations: Double?
        var statusesPerHostileCompound: Double
    }

    /// 30 feedbacks of 65,535 "not received" statuses (nine run-length
    /// chunks, 40 bytes each): 1200 bytes.
    static func hostileCompound(base: UInt16) -> [UInt8] {
        var out: [UInt8] = []
        for i in 0..<30 {
            let b = base &+ UInt16(i)
            out += [0x8F, 205, 0, 9, 0, 0, 0, 1, 0, 0, 0, 2, UInt8(b >> 8), UInt8(b & 0xFF), 0xFF, 0xFF, 0, 0, 1, UInt8(i)]
            for _ in 0..<8 { out += [0x1F, 0xFF] }
            out += [0x00, 0x07, 0, 0]  // the last 7 statuses, then padding
        }
        precondition(out.count == 1200)
        return out
    }

    static func sendHistory(_ history: inout SentPacketHistory, packets: Int, from: Instant) {
        for i in 0..<packets {
            history.sent(
                transportSequenceNumber: history.nextSequenceNumber(), size: 1100,
                at: from + .microseconds(Int64(i) * 2500), kind: .media)
        }
    }

    /// Parses and processes `bytes` as the worker does (without the rate
    /// limit, to measure a processed feedback).
    static func process(
        _ bytes: [UInt8], estimator: inout SendSideBandwidthEstimator, prober: inout ProbeController,
        history: SentPacketHistory, now: Instant
    ) {
        bytes.withUnsafeBytes { raw in
            let span = RawSpan(_unsafeBytes: raw)
            guard let compound = try? RTCPCompoundPacket.parse(span) else { return }
            for (index, packet) in compound.packets.enumerated() {
                guard case .transportCCFeedback(let feedback) = packet else { continue }
                let packetBytes = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: raw[compound.packetRanges[index]]))
                estimator.transportFeedback(feedback, packet: packetBytes, history: history, now: now)
                if case .succeeded(let rate)? = prober.transportFeedback(
                    feedback, packet: packetBytes, history: history, now: now)
                {
                    estimator.probeSucceeded(rate, now: now)
                }
            }
        }
    }

    func run() -> Result {
        let clock = ThreadCPUClock()
        let t0 = Instant(nanoseconds: 10_000_000_000)
        // Hostile: a full history (8192 held) and, each round, a fresh
        // subscriber state, so every compound walks as much as it can.
        var history = SentPacketHistory(firstSequenceNumber: 1)
        Self.sendHistory(&history, packets: SentPacketHistory.defaultCapacity, from: t0)
        let hostile = Self.hostileCompound(base: 1)
        var visited = 0
        var hostileTime = Duration.zero
        for _ in 0..<iterations {
            var estimator = SendSideBandwidthEstimator()
            var prober = ProbeController()
            let start = clock.now
            Self.process(hostile, estimator: &estimator, prober: &prober, history: history, now: t0 + .seconds(30))
            hostileTime += clock.now - start
            visited += estimator.statusesVisited
        }
        // What the parser did before: every status expanded into arrays and
        // walked (TransportLayerCC(expanding:) and `packets` reproduce it).
        var expandedTime = Duration.zero
        let expandedRounds = max(1, iterations / 20)
        for _ in 0..<expandedRounds {
            let start = clock.now
            hostile.withUnsafeBytes { raw in
                guard let compound = try? RTCPCompoundPacket.parse(RawSpan(_unsafeBytes: raw)) else { return }
                var held = 0
                for case .transportLayerCC(let cc) in compound.expandedPackets(RawSpan(_unsafeBytes: raw)) {
                    for result in cc.packets where history.packet(result.sequenceNumber) != nil { held += 1 }
                }
                precondition(held > 0)
            }
            expandedTime += clock.now - start
        }

        // Honest: 20 packets sent 2.5 ms apart, then their feedback (all
        // received, one lost), as a 50 ms feedback interval at 400 pkt/s.
        var honestHistory = SentPacketHistory(firstSequenceNumber: 1)
        var estimator = SendSideBandwidthEstimator()
        var prober = ProbeController()
        let rounds = iterations * 10
        var feedbacks: [[UInt8]] = []
        feedbacks.reserveCapacity(rounds)
        for r in 0..<rounds {
            let arrivals = (0..<20).map { i in
                TransportCCArrival(
                    sequenceNumber: UInt16(truncatingIfNeeded: 1 + r * 20 + i),
                    arrival: i == 7 ? nil : t0 + .milliseconds(Int64(r) * 50) + .microseconds(Int64(i) * 2500 + 20_000))
            }
            let built = TransportLayerCC.build(
                senderSSRC: SSRC(1), mediaSSRC: SSRC(2), feedbackPacketCount: UInt8(truncatingIfNeeded: r), arrivals: arrivals)
            feedbacks.append(built.feedback.serialized())
        }
        // Warm-up: grow the estimator's windows to their steady size.
        let warm = rounds / 2
        for r in 0..<warm {
            let at = t0 + .milliseconds(Int64(r) * 50)
            Self.sendHistory(&honestHistory, packets: 20, from: at)
            Self.process(
                feedbacks[r], estimator: &estimator, prober: &prober, history: honestHistory, now: at + .milliseconds(70))
        }
        let walkFrom = warm + (rounds - warm) / 2
        let allocationsBefore = Self.allocationCount()
        var honestTime = Duration.zero
        for r in warm..<walkFrom {
            let at = t0 + .milliseconds(Int64(r) * 50)
            Self.sendHistory(&honestHistory, packets: 20, from: at)
            let start = clock.now
            Self.process(
                feedbacks[r], estimator: &estimator, prober: &prober, history: honestHistory, now: at + .milliseconds(70))
            honestTime += clock.now - start
        }
        let allocationsAfter = Self.allocationCount()
        var perFeedback: Double?
        if let a = allocationsBefore, let b = allocationsAfter, b >= a { perFeedback = Double(b - a) / Double(walkFrom - warm) }
        // The same with the compounds parsed beforehand: what the walk
        // itself allocates.
        let parsed = feedbacks[walkFrom...].map { TransportCCFeedback.parsedPacket($0.span.bytes)! }
        let walkBefore = Self.allocationCount()
        for r in walkFrom..<rounds {
            let at = t0 + .milliseconds(Int64(r) * 50)
            Self.sendHistory(&honestHistory, packets: 20, from: at)
            let feedback = parsed[r - walkFrom]
            feedbacks[r].withUnsafeBytes { raw in
                let span = RawSpan(_unsafeBytes: raw)
                estimator.transportFeedback(feedback, packet: span, history: honestHistory, now: at + .milliseconds(70))
                _ = prober.transportFeedback(feedback, packet: span, history: honestHistory, now: at + .milliseconds(70))
            }
        }
        let walkAfter = Self.allocationCount()
        if let a = walkBefore, let b = walkAfter, b < a { print("allocation counter went back: \(a) -> \(b)") }
        var perWalk: Double?
        if let a = walkBefore, let b = walkAfter, b >= a { perWalk = Double(b - a) / Double(rounds - walkFrom) }
        return Result(
            hostileNanoseconds: Double(hostileTime.nanoseconds) / Double(iterations),
            hostileExpandedNanoseconds: Double(expandedTime.nanoseconds) / Double(expandedRounds),
            honestNanoseconds: Double(honestTime.nanoseconds) / Double(walkFrom - warm),
            honestAllocations: perFeedback, walkAllocations: perWalk,
            statusesPerHostileCompound: Double(visited) / Double(iterations))
    }

    /// The allocation count from Scripts/bench-support/malloc_count.c when
    /// preloaded with MALLOC_COUNT_FILE set (written every 100 ms: wait
    /// for a fresh value), else nil.
    static func allocationCount() -> UInt64? {
        guard let path = ProcessInfo.processInfo.environment["MALLOC_COUNT_FILE"] else { return nil }
        usleep(250_000)
        // The shim truncates and rewrites the file: a read can catch it
        // empty or half written, so take the largest of a few reads.
        var best: UInt64?
        for _ in 0..<5 {
            if let text = try? String(contentsOfFile: path, encoding: .utf8),
                let value = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                best = max(best ?? 0, value)
            }
            usleep(30_000)
        }
        return best
    }
}

/// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID): on a shared
/// machine wall time counts other processes' slices too.
struct ThreadCPUClock {
    var now: Duration {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return .seconds(Int64(t.tv_sec)) + .nanoseconds(Int64(t.tv_nsec))
    }
}
