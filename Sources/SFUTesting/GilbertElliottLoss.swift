/// A two-state Markov loss model (Gilbert-Elliott): in the good state a
/// packet is lost with probability `goodLoss`, in the bad state with
/// `badLoss`; after each packet the state flips with `goodToBad` or
/// `badToGood`. Losses come in bursts, as on real Wi-Fi and cellular
/// links, unlike independent (Bernoulli) loss. Seeded, so a simulation
/// replays exactly.
package struct GilbertElliottLoss: Sendable {
    package var goodToBad: Double
    package var badToGood: Double
    package var goodLoss: Double
    package var badLoss: Double
    package private(set) var isBad = false
    package private(set) var packets = 0
    package private(set) var lost = 0
    private var state: UInt64

    package init(goodToBad: Double, badToGood: Double, goodLoss: Double = 0, badLoss: Double = 1, seed: UInt64) {
        self.goodToBad = goodToBad
        self.badToGood = badToGood
        self.goodLoss = goodLoss
        self.badLoss = badLoss
        state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
    }

    /// Bursts of `meanBurst` packets on average (every packet in a burst is
    /// lost), tuned so the long-run loss is `averageLoss` (0..<1): the bad
    /// state's share is `averageLoss`, so
    /// `goodToBad = averageLoss / ((1 - averageLoss) * meanBurst)`.
    package static func bursty(averageLoss: Double, meanBurst: Double = 3, seed: UInt64) -> Self {
        let p = min(max(averageLoss, 0), 0.99)
        let burst = max(meanBurst, 1)
        return GilbertElliottLoss(
            goodToBad: p / ((1 - p) * burst), badToGood: 1 / burst, goodLoss: 0, badLoss: 1, seed: seed)
    }

    /// The stationary loss rate the parameters give.
    package var averageLoss: Double {
        let badShare = goodToBad / (goodToBad + badToGood)
        return badShare * badLoss + (1 - badShare) * goodLoss
    }

    /// Whether the next packet is lost; moves the chain one step.
    package mutating func nextIsLost() -> Bool {
        packets += 1
        let isLost = uniform() < (isBad ? badLoss : goodLoss)
        if isLost { lost += 1 }
        if isBad { if uniform() < badToGood { isBad = false } } else if uniform() < goodToBad { isBad = true }
        return isLost
    }

    private mutating func uniform() -> Double {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return Double((state &* 0x2545_F491_4F6C_DD1D) >> 11) / Double(1 << 53)
    }
}
