import LossRecovery
import SFUTesting
import Testing
import Wire

extension NACKGenerator {
    mutating func receive(_ seqs: [UInt16], atMs ms: Int64, retransmission: Bool = false) {
        for seq in seqs { received(sequenceNumber: seq, arrival: at(ms: ms), isRetransmission: retransmission) }
    }
}

@Suite struct NACKGeneratorTests {
    @Test func singleGapIsNACKedOnlyAfterTheReorderWait() {
        var nack = NACKGenerator()
        nack.receive([1], atMs: 0)
        nack.receive([3], atMs: 20)
        #expect(nack.missingCount == 1)
        #expect(nack.nextDeadline == at(ms: 30))
        #expect(nack.poll(now: at(ms: 29), roundTripTime: nil) == NACKRequest())
        #expect(nack.poll(now: at(ms: 30), roundTripTime: nil) == NACKRequest(sequenceNumbers: [2]))
        // Unknown RTT: the retry waits the default 100 ms.
        #expect(nack.nextDeadline == at(ms: 130))
        #expect(nack.requestedCount == 1)
    }

    @Test func missingNumberIsReNACKedAfterOneRoundTrip() {
        var nack = NACKGenerator()
        nack.receive([10, 12], atMs: 0)
        #expect(nack.poll(now: at(ms: 10), roundTripTime: .milliseconds(50)).sequenceNumbers == [11])
        #expect(nack.poll(now: at(ms: 59), roundTripTime: .milliseconds(50)).sequenceNumbers == [])
        #expect(nack.nextDeadline == at(ms: 60))
        #expect(nack.poll(now: at(ms: 60), roundTripTime: .milliseconds(50)).sequenceNumbers == [11])
    }

    @Test func aNumberIsNACKedAtMostMaxRetriesTimes() {
        var config = NACKGenerator.Configuration()
        config.maxRetries = 3
        var nack = NACKGenerator(configuration: config)
        nack.receive([1, 3], atMs: 0)
        var sent = 0
        for ms in stride(from: Int64(0), through: 900, by: 10) {
            sent += nack.poll(now: at(ms: ms), roundTripTime: .milliseconds(20)).sequenceNumbers.count
        }
        #expect(sent == 3)
        #expect(nack.missingCount == 0)
        #expect(nack.nextDeadline == nil)
    }

    @Test func reorderedPacketFillsItsGapBeforeAnyNACK() {
        var nack = NACKGenerator()
        nack.receive([1, 3], atMs: 0)
        nack.receive([2], atMs: 5)
        #expect(nack.missingCount == 0)
        #expect(nack.poll(now: at(ms: 50), roundTripTime: nil) == NACKRequest())
        #expect(nack.nextDeadline == nil)
    }

    @Test func gapsAreForgottenAfterMaxAge() {
        var config = NACKGenerator.Configuration()
        config.maxRetries = 100
        var nack = NACKGenerator(configuration: config)
        nack.receive([1, 3], atMs: 0)
        var sendTimes: [Int64] = []
        var ms: Int64 = 0
        while let deadline = nack.nextDeadline, ms < 5000 {
            ms = deadline.nanoseconds / 1_000_000
            if !nack.poll(now: deadline, roundTripTime: .milliseconds(100)).sequenceNumbers.isEmpty { sendTimes.append(ms) }
        }
        #expect(sendTimes == [10, 110, 210, 310, 410, 510, 610, 710, 810, 910])
        // The next retry (1010 ms) falls after the 1 s expiry: nothing to wake for.
        #expect(nack.nextDeadline == nil)
        #expect(nack.poll(now: at(ms: 1001), roundTripTime: .milliseconds(100)) == NACKRequest())
        #expect(nack.missingCount == 0)
    }

    @Test func gapsAcrossTheWrapAreNACKedInOrder() {
        var nack = NACKGenerator()
        nack.receive([65533, 65534], atMs: 0)
        nack.receive([1], atMs: 1)
        #expect(nack.poll(now: at(ms: 11), roundTripTime: nil).sequenceNumbers == [65535, 0])
    }

    @Test func hugeJumpAsksForAKeyframeInsteadOfNACKs() {
        var nack = NACKGenerator()
        nack.receive([100, 101], atMs: 0)
        nack.receive([101 + 1002], atMs: 1)
        #expect(nack.missingCount == 0)
        #expect(nack.nextDeadline == at(ms: 1))
        #expect(nack.poll(now: at(ms: 1), roundTripTime: nil) == NACKRequest(keyframeNeeded: true))
        #expect(nack.poll(now: at(ms: 2), roundTripTime: nil) == NACKRequest())
        // Numbering continues from the jump.
        nack.receive([1105], atMs: 3)
        #expect(nack.poll(now: at(ms: 20), roundTripTime: nil).sequenceNumbers == [1104])
        #expect(nack.keyframeRequestCount == 1)
    }

    @Test func tooManyOutstandingGapsClearTheListAndAskForAKeyframe() {
        var config = NACKGenerator.Configuration()
        config.maxMissing = 10
        var nack = NACKGenerator(configuration: config)
        nack.receive([1, 6], atMs: 0)  // 2...5
        nack.receive([12], atMs: 0)  // 7...11: 9 missing
        #expect(nack.missingCount == 9)
        nack.receive([15], atMs: 0)  // 13, 14 would make 11
        #expect(nack.missingCount == 2)
        #expect(nack.poll(now: at(ms: 10), roundTripTime: nil) == NACKRequest(sequenceNumbers: [13, 14], keyframeNeeded: true))
    }

    @Test func numberingThatRestartsFarBehindStartsOver() {
        var nack = NACKGenerator()
        nack.receive([20000], atMs: 0)
        nack.receive([5000], atMs: 1)
        nack.receive([5002], atMs: 2)
        #expect(nack.poll(now: at(ms: 12), roundTripTime: nil) == NACKRequest(sequenceNumbers: [5001], keyframeNeeded: true))
    }

    @Test func retransmittedPacketsFillGapsButNeverCreateThem() {
        var nack = NACKGenerator()
        nack.receive([1, 2], atMs: 0)
        nack.receive([7], atMs: 1, retransmission: true)  // newer than highest: ignored
        nack.receive([3], atMs: 2)
        #expect(nack.missingCount == 0)
        nack.receive([6], atMs: 3)
        #expect(nack.missingCount == 2)
        nack.receive([4], atMs: 4, retransmission: true)
        #expect(nack.poll(now: at(ms: 20), roundTripTime: nil).sequenceNumbers == [5])
    }

    @Test func pollIntoACallerBufferAppendsTheSameNumbers() {
        var nack = NACKGenerator()
        nack.receive([1, 4], atMs: 0)
        var numbers: [UInt16] = [999]
        let keyframe = nack.poll(now: at(ms: 10), roundTripTime: nil, into: &numbers)
        #expect(numbers == [999, 2, 3])
        #expect(!keyframe)
    }

    @Test func duplicatesAndTheFirstPacketCreateNoGaps() {
        var nack = NACKGenerator()
        nack.receive([500, 500, 501, 501], atMs: 0)
        #expect(nack.missingCount == 0)
        #expect(nack.nextDeadline == nil)
    }

    /// 20,000 packets at 500 per second through a seeded bursty channel
    /// (Gilbert-Elliott: bursts of 1 to 10 losses): every lost packet is
    /// NACKed within two round trips of when it should have arrived, and
    /// none more than `maxRetries` times.
    @Test func everyPacketOfABurstyLossIsNACKedWithinTwoRoundTrips() {
        var rng = SeededRandom(seed: 0x4E41_434B)
        let rtt = Duration.milliseconds(60)
        var nack = NACKGenerator()
        var lostAt: [UInt16: Int64] = [:]
        var firstNACK: [UInt16: Int64] = [:]
        var timesNACKed: [UInt16: Int] = [:]
        var burstLeft = 0
        var seq: UInt16 = 60000
        var nextPoll: Int64 = 0
        for i in 0..<20_000 {
            let ms = Int64(i) * 2
            while nextPoll <= ms {
                for n in nack.poll(now: at(ms: nextPoll), roundTripTime: rtt).sequenceNumbers {
                    if firstNACK[n] == nil { firstNACK[n] = nextPoll }
                    timesNACKed[n, default: 0] += 1
                }
                nextPoll += 5
            }
            if burstLeft == 0, rng.below(100) < 2 { burstLeft = 1 + rng.below(10) }
            if burstLeft > 0 {
                burstLeft -= 1
                lostAt[seq] = ms
            } else {
                nack.received(sequenceNumber: seq, arrival: at(ms: ms), isRetransmission: false)
            }
            seq &+= 1
        }
        // Losses in the last 200 ms have not had their chance yet.
        let judged = lostAt.filter { $0.value < 40_000 - 200 }
        #expect(judged.count > 500)
        let late = judged.filter { seq, lost in (firstNACK[seq].map { $0 - lost > 120 }) ?? true }
        #expect(late.isEmpty)
        #expect(timesNACKed.values.allSatisfy { $0 <= 10 })
        #expect(Set(firstNACK.keys).isSubset(of: Set(lostAt.keys)))
    }
}
