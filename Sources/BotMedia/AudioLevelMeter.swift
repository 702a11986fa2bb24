/// The audio level of RFC 6464 section 3 from 16-bit PCM: the RMS of the
/// samples relative to the overload point (full scale, 32768) in dB,
/// negated, rounded to the nearest integer and clamped to 0...127; digital
/// silence is 127. This is what libwebrtc's `RmsLevel` computes per 10 ms;
/// here it is computed per encoded frame.
///
/// Without libm, the logarithm is a lookup: level L is the smallest L with
/// power >= 10^(-(L + 0.5) / 10), a table of 128 thresholds built by
/// repeated multiplication.
package enum AudioLevelMeter {
    static let thresholds: [Double] = {
        // 10^(-0.1) and 10^(-0.05): one dB step and the half-step for rounding.
        let step = 0.794_328_234_724_281_5
        var value = 0.891_250_938_133_745_6
        var table = [Double](repeating: 0, count: 128)
        for i in 0..<128 {
            table[i] = value
            value *= step
        }
        return table
    }()

    /// -dBov of `samples`, 0...127.
    package static func level(_ samples: UnsafeBufferPointer<Int16>) -> UInt8 {
        guard !samples.isEmpty else { return 127 }
        var sum = 0.0
        for s in samples {
            let v = Double(s)
            sum += v * v
        }
        let power = sum / Double(samples.count) / (32768.0 * 32768.0)
        for (level, threshold) in thresholds.enumerated() where power >= threshold {
            return UInt8(level)
        }
        return 127
    }

    package static func level(_ samples: [Int16]) -> UInt8 {
        samples.withUnsafeBufferPointer { level($0) }
    }
}
