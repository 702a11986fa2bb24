/// The delay-gradient filter and over-use detector of the delay-based
/// controller (draft-ietf-rmcat-gcc-02 sections 5.3 and 5.4).
///
/// Instead of the draft's Kalman filter this fits a least-squares line
/// through the last `windowSize` points of (arrival time, smoothed
/// accumulated queuing delay), as libwebrtc's trendline estimator does: the
/// slope is how fast the bottleneck queue grows. The slope, scaled by the
/// number of deltas seen (at most 60) and a gain, is compared with an
/// adaptive threshold (section 5.4): over it for more than 10 ms, on more
/// than one delta, and not falling, is over-use; under its negative is
/// under-use. The threshold follows the signal up slowly (`kUp`) and down
/// faster (`kDown`), ignores outliers more than 15 ms beyond it, and stays
/// within 6 ... 600, so that the detector neither starves against loss-based
/// flows nor reacts to noise.
struct TrendlineEstimator: Sendable {
    static let windowSize = 20
    static let smoothing = 0.9
    static let gain = 4.0
    static let maximumDeltas = 60
    static let overusingTime = 10.0
    static let kUp = 0.0087
    static let kDown = 0.039
    static let maximumAdaptOffset = 15.0
    static let thresholdRange = 6.0...600.0

    private(set) var usage: BandwidthUsage = .normal
    private(set) var threshold = 12.5
    private(set) var trend = 0.0

    private var deltas = 0
    private var accumulatedDelay = 0.0
    private var smoothedDelay = 0.0
    private var firstArrival: Double?
    /// (arrival ms since first, smoothed delay ms), oldest first, a ring.
    private var window: [(x: Double, y: Double)]
    private var windowStart = 0
    private var previousTrend = 0.0
    private var timeOverusing = -1.0
    private var overuseCount = 0
    private var lastThresholdUpdate: Double?

    init() {
        window = []
        window.reserveCapacity(Self.windowSize)
    }

    /// Feeds one group delta: times in milliseconds, arrival on the
    /// receiver's clock.
    mutating func update(arrivalDelta: Double, sendDelta: Double, arrival: Double) -> BandwidthUsage {
        deltas = min(deltas + 1, 1000)
        accumulatedDelay += arrivalDelta - sendDelta
        smoothedDelay = Self.smoothing * smoothedDelay + (1 - Self.smoothing) * accumulatedDelay
        let origin = firstArrival ?? arrival
        firstArrival = origin
        let point = (x: arrival - origin, y: smoothedDelay)
        if window.count < Self.windowSize {
            window.append(point)
        } else {
            window[windowStart] = point
            windowStart = (windowStart + 1) % Self.windowSize
        }
        if window.count == Self.windowSize, let slope = Self.slope(window) {
            trend = slope
        }
        detect(sendDelta: sendDelta, arrival: arrival)
        return usage
    }

    /// Least-squares slope, nil when every x is the same.
    static func slope(_ points: [(x: Double, y: Double)]) -> Double? {
        guard !points.isEmpty else { return nil }
        let n = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / n
        let meanY = points.reduce(0) { $0 + $1.y } / n
        var numerator = 0.0
        var denominator = 0.0
        for p in points {
            numerator += (p.x - meanX) * (p.y - meanY)
            denominator += (p.x - meanX) * (p.x - meanX)
        }
        guard denominator != 0, numerator.isFinite, denominator.isFinite else { return nil }
        return numerator / denominator
    }

    private mutating func detect(sendDelta: Double, arrival: Double) {
        guard deltas >= 2 else {
            usage = .normal
            return
        }
        let modified = Double(min(deltas, Self.maximumDeltas)) * trend * Self.gain
        if modified > threshold {
            timeOverusing = timeOverusing < 0 ? sendDelta / 2 : timeOverusing + sendDelta
            overuseCount += 1
            if timeOverusing > Self.overusingTime, overuseCount > 1, trend >= previousTrend {
                timeOverusing = 0
                overuseCount = 0
                usage = .overusing
            }
        } else if modified < -threshold {
            timeOverusing = -1
            overuseCount = 0
            usage = .underusing
        } else {
            timeOverusing = -1
            overuseCount = 0
            usage = .normal
        }
        previousTrend = trend
        adaptThreshold(modified, arrival: arrival)
    }

    private mutating func adaptThreshold(_ modified: Double, arrival: Double) {
        let last = lastThresholdUpdate ?? arrival
        lastThresholdUpdate = arrival
        let magnitude = abs(modified)
        guard magnitude.isFinite, magnitude <= threshold + Self.maximumAdaptOffset else { return }
        let k = magnitude < threshold ? Self.kDown : Self.kUp
        let elapsed = min(max(arrival - last, 0), 100)
        threshold += k * (magnitude - threshold) * elapsed
        threshold = min(max(threshold, Self.thresholdRange.lowerBound), Self.thresholdRange.upperBound)
    }
}
