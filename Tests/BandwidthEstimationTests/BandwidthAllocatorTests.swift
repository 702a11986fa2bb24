import BandwidthEstimation
import SFUTesting
import Testing
import Wire

@Suite struct BandwidthAllocatorTests {
    let allocator = BandwidthAllocator()

    /// Three spatial layers with three temporal layers each, cumulative:
    /// S0 100/150/200k, S1 300/450/600k, S2 1000/1500/2000k.
    static let simulcast: [[Bitrate]] = [
        [.kbps(100), .kbps(150), .kbps(200)],
        [.kbps(300), .kbps(450), .kbps(600)],
        [.kbps(1000), .kbps(1500), .kbps(2000)],
    ]

    static func video(_ id: Int, priority: Int = 0, cap: Int? = nil, current: MediaLayer? = nil) -> AllocatableTrack {
        AllocatableTrack(id: id, kind: .video, priority: priority, maxSpatialLayer: cap, layers: simulcast, current: current)
    }

    static func audio(_ id: Int) -> AllocatableTrack {
        AllocatableTrack(id: id, kind: .audio, layers: [[.kbps(40)]])
    }

    static func layer(_ s: Int, _ t: Int) -> MediaLayer { MediaLayer(spatial: s, temporal: t) }

    @Test func audioIsServedBeforeVideo() {
        // 130k: audio (40k) fits, the video's lowest layer (100k + 10 %) does not.
        let result = allocator.allocate(estimate: .kbps(130), tracks: [Self.video(1), Self.audio(2)])
        #expect(result[2] == .forward(Self.layer(0, 0), allocated: .kbps(40)))
        #expect(result[1] == .paused)
        #expect(result.allocated == .kbps(40))
        #expect(result.decisions.map(\.id) == [1, 2])
    }

    @Test func audioIsPausedOnlyWhenTheEstimateCannotCarryIt() {
        let result = allocator.allocate(estimate: .kbps(30), tracks: [Self.audio(1)])
        #expect(result[1] == .paused)
    }

    @Test func everyVideoGetsItsLowestLayerBeforeAnyGetsMore() {
        // 40k audio + 3 × 110k = 370k needed for three lowest layers.
        let tracks = [Self.audio(9), Self.video(1, priority: 3), Self.video(2, priority: 2), Self.video(3, priority: 1)]
        let result = allocator.allocate(estimate: .kbps(380), tracks: tracks)
        #expect(result[1] == .forward(Self.layer(0, 0), allocated: .kbps(100)))
        #expect(result[2] == .forward(Self.layer(0, 0), allocated: .kbps(100)))
        #expect(result[3] == .forward(Self.layer(0, 0), allocated: .kbps(100)))
        // Next step (S0T1, 150k, +50k +15k headroom) does not fit the 40k left.
        #expect(result.probe == .kbps(25))
    }

    @Test func higherPriorityVideoStepsUpFirst() {
        // 400k left after audio; three lowest layers take 300k; the first
        // step up (S0T1: +50k, +15k headroom) goes to the top-priority video,
        // and the 35k left are short of the next video's 65k.
        let tracks = [Self.video(1, priority: 1), Self.video(2, priority: 5), Self.video(3, priority: 3), Self.audio(9)]
        let result = allocator.allocate(estimate: .kbps(440), tracks: tracks)
        #expect(result[2] == .forward(Self.layer(0, 1), allocated: .kbps(150)))
        #expect(result[3] == .forward(Self.layer(0, 0), allocated: .kbps(100)))
        #expect(result[1] == .forward(Self.layer(0, 0), allocated: .kbps(100)))
        #expect(result.allocated == .kbps(390))
    }

    @Test func lowestPriorityVideoIsPausedWhenOnlyTwoFit() {
        let tracks = [Self.video(1, priority: 1), Self.video(2, priority: 2), Self.video(3, priority: 3)]
        let result = allocator.allocate(estimate: .kbps(250), tracks: tracks)
        #expect(result[3] == .forward(Self.layer(0, 0), allocated: .kbps(100)))
        #expect(result[2] == .forward(Self.layer(0, 0), allocated: .kbps(100)))
        #expect(result[1] == .paused)
        // The paused video's lowest layer needs 110k; 50k are left.
        #expect(result.probe == .kbps(60))
    }

    @Test func videoBelowItsLowestLayerIsPausedAndResumesWithHeadroom() {
        #expect(allocator.allocate(estimate: .kbps(105), tracks: [Self.video(1)])[1] == .paused)
        #expect(
            allocator.allocate(estimate: .kbps(110), tracks: [Self.video(1)])[1]
                == .forward(Self.layer(0, 0), allocated: .kbps(100)))
        // Once forwarded, it stays down to exactly its cost.
        let forwarded = Self.video(1, current: Self.layer(0, 0))
        #expect(
            allocator.allocate(estimate: .kbps(100), tracks: [forwarded])[1]
                == .forward(Self.layer(0, 0), allocated: .kbps(100)))
        #expect(allocator.allocate(estimate: .kbps(99), tracks: [forwarded])[1] == .paused)
    }

    @Test func climbsTemporalLayersBeforeTheNextSpatialLayer() {
        let result = allocator.allocate(estimate: .kbps(500), tracks: [Self.video(1)])
        // S1T0 (300k) needs 330k with headroom; S1T1 (450k) needs 495k.
        #expect(result[1] == .forward(Self.layer(1, 1), allocated: .kbps(450)))
        let top = allocator.allocate(estimate: .mbps(5), tracks: [Self.video(1)])
        #expect(top[1] == .forward(Self.layer(2, 2), allocated: .kbps(2000)))
        #expect(top.probe == nil)
    }

    @Test func respectsTheSubscribersSpatialCap() {
        let result = allocator.allocate(estimate: .mbps(5), tracks: [Self.video(1, cap: 1)])
        #expect(result[1] == .forward(Self.layer(1, 2), allocated: .kbps(600)))
        #expect(result.probe == nil)
    }

    @Test func skipsLayersThePublisherDoesNotSend() {
        var track = Self.video(1)
        track.layers = LayerRates([[.kbps(0)], [.kbps(300), .kbps(450)], []])
        let result = allocator.allocate(estimate: .mbps(5), tracks: [track])
        #expect(result[1] == .forward(Self.layer(1, 1), allocated: .kbps(450)))
        track.layers = LayerRates([[], [.kbps(0)]])
        #expect(allocator.allocate(estimate: .mbps(5), tracks: [track])[1] == .unavailable)
    }

    @Test func dropsTemporalLayersBeforeSpatialOnDecrease() {
        let current = Self.layer(2, 2)
        let estimates: [Int64] = [2000, 1600, 1100, 700, 500, 350, 250, 120]
        var layers: [MediaLayer] = []
        var last = current
        for kbps in estimates {
            let result = allocator.allocate(estimate: .kbps(kbps), tracks: [Self.video(1, current: last)])
            guard case .forward(let layer, _) = result[1] else {
                Issue.record("paused at \(kbps)")
                return
            }
            layers.append(layer)
            last = layer
        }
        #expect(
            layers == [
                Self.layer(2, 2), Self.layer(2, 1), Self.layer(2, 0), Self.layer(1, 2), Self.layer(1, 1),
                Self.layer(1, 0), Self.layer(0, 2), Self.layer(0, 0),
            ])
    }

    @Test func estimateJitteringAroundABoundaryDoesNotFlap() {
        // Forwarding S1T0 (300k); S1T1 costs 450k. An estimate jittering
        // ±4 % around 460k never reaches 495k, so the layer stays.
        var current = Self.layer(1, 0)
        var rng = SeededRandom(seed: 3)
        var changes = 0
        for _ in 0..<200 {
            let jitter = Int64(rng.next() % 37_000) - 18_000
            let result = allocator.allocate(
                estimate: Bitrate(bitsPerSecond: 460_000 + jitter), tracks: [Self.video(1, current: current)])
            guard case .forward(let layer, _) = result[1] else {
                Issue.record("paused")
                return
            }
            if layer != current { changes += 1 }
            current = layer
        }
        #expect(changes == 0)
        #expect(current == Self.layer(1, 0))
        // Once at S1T1, the same jitter (never below 450k) keeps it there.
        current = Self.layer(1, 1)
        for _ in 0..<200 {
            let jitter = Int64(rng.next() % 37_000) - 18_000
            let result = allocator.allocate(
                estimate: Bitrate(bitsPerSecond: 470_000 + jitter), tracks: [Self.video(1, current: current)])
            if case .forward(let layer, _) = result[1], layer != current { changes += 1 }
        }
        #expect(changes == 0)
    }

    @Test func reportsProbeWhenCappedByTheEstimate() {
        // S1T1 fits (495k with headroom); S1T2 (600k) needs 150k more + 60k headroom.
        let result = allocator.allocate(estimate: .kbps(500), tracks: [Self.video(1)])
        #expect(result.probe == .kbps(160))
    }

    @Test func equalPriorityGoesToTheLargerOnScreenTrack() {
        let tracks = [Self.video(1, cap: 0), Self.video(2, cap: 2)]
        // 220k + 65k for S0T1 of the larger track.
        let result = allocator.allocate(estimate: .kbps(290), tracks: tracks)
        #expect(result[2] == .forward(Self.layer(0, 1), allocated: .kbps(150)))
        #expect(result[1] == .forward(Self.layer(0, 0), allocated: .kbps(100)))
    }
}

extension BandwidthAllocatorTests {
    @Test func extremeRatesNeitherTrapNorOverflow() {
        var track = Self.video(1)
        track.layers = LayerRates([[Bitrate(bitsPerSecond: .max), Bitrate(bitsPerSecond: -5)], [Bitrate(bitsPerSecond: 1)]])
        let audio = AllocatableTrack(id: 2, kind: .audio, layers: [[Bitrate(bitsPerSecond: .max)]])
        let result = allocator.allocate(estimate: Bitrate(bitsPerSecond: .max), tracks: [track, audio, Self.audio(3)])
        #expect(result[2] == .forward(Self.layer(0, 0), allocated: Bitrate(bitsPerSecond: 1 << 53)))
        #expect(result[3] == .paused)
        #expect(result[1] == .paused)
        let empty = allocator.allocate(estimate: Bitrate(bitsPerSecond: .min), tracks: [])
        #expect(empty.decisions.isEmpty)
        #expect(empty.probe == nil)
    }

    /// The server keeps one workspace for every link's rounds: a reused
    /// workspace gives what a fresh one gives, whatever ran in it before
    /// (more tracks, fewer, probes or none).
    @Test func aReusedWorkspaceGivesWhatAFreshOneGives() {
        var random = SeededGenerator(state: 7)
        var workspace = BandwidthAllocator.Workspace()
        for _ in 0..<500 {
            let count = Int(random.next() % 9)
            let tracks = (0..<count).map { i -> AllocatableTrack in
                if random.next() % 3 == 0 {
                    return AllocatableTrack(id: i, kind: .audio, layers: [[.kbps(20 + Int64(random.next() % 40))]])
                }
                var layers: [[Bitrate]] = []
                for _ in 0..<(1 + random.next() % 3) {
                    var sum: Int64 = 0
                    layers.append(
                        (0..<(random.next() % 4)).map { _ in
                            sum += Int64(random.next() % 800)
                            return .kbps(sum)
                        })
                }
                let cap: Int? = random.next() % 2 == 0 ? nil : Int(random.next() % 3)
                let current: MediaLayer? =
                    random.next() % 2 == 0 ? nil : Self.layer(Int(random.next() % 3), Int(random.next() % 3))
                return AllocatableTrack(
                    id: i, kind: .video, priority: Int(random.next() % 2), maxSpatialLayer: cap, layers: layers,
                    current: current)
            }
            let estimate = Bitrate.kbps(Int64(random.next() % 4000))
            let fresh = allocator.allocate(estimate: estimate, tracks: tracks)
            allocator.allocate(estimate: estimate, tracks: tracks, into: &workspace)
            #expect(workspace.decisions == fresh.decisions)
            #expect(workspace.probe == fresh.probe && workspace.allocated == fresh.allocated)
        }
    }
}
