/// A deterministic speech-like signal at 48 kHz, 16-bit mono: talkspurts of
/// syllables (voiced harmonics with a pitch that glides and an envelope
/// that rises and falls), separated by pauses of digital silence of 0.3 to
/// 1 s, the way a conversation leaves gaps that make Opus DTX stop sending.
///
/// No libm in a sans-IO target: sine comes from a 4096-entry table built by
/// a rotation recurrence, which is exact enough for a test signal.
struct SyntheticSpeech {
    static let sampleRate = 48_000

    /// Where the next sample falls.
    private enum Segment {
        case syllable(remaining: Int, length: Int, pitch: Double, glide: Double)
        case gap(remaining: Int)
        case pause(remaining: Int)
    }

    private var random: UInt64
    private var segment: Segment
    private var syllablesLeft: Int
    private var phase: Double = 0
    private let table: [Double]

    init(seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        random = seed == 0 ? 1 : seed
        segment = .pause(remaining: 0)
        syllablesLeft = 0
        table = Self.sineTable(count: 4096)
    }

    /// True while the current sample is inside a pause (for tests).
    private(set) var inPause = true

    /// Fills `samples` with the next samples of the signal.
    mutating func fill(_ samples: inout [Int16]) {
        for i in samples.indices { samples[i] = next() }
    }

    mutating func next() -> Int16 {
        switch segment {
        case .pause(let remaining) where remaining > 0:
            segment = .pause(remaining: remaining - 1)
            inPause = true
            return 0
        case .gap(let remaining) where remaining > 0:
            segment = .gap(remaining: remaining - 1)
            inPause = false
            return 0
        case .syllable(let remaining, let length, let pitch, let glide) where remaining > 0:
            segment = .syllable(remaining: remaining - 1, length: length, pitch: pitch + glide, glide: glide)
            inPause = false
            let t = Double(length - remaining) / Double(length)
            // sin^2 envelope: silent at both ends of the syllable.
            let envelope = sine(0.5 * t)
            phase += pitch / Double(Self.sampleRate)
            if phase >= 1 { phase -= 1 }
            var value = 0.0
            // Harmonics fall off as 1/k, with a bump near a "formant".
            for k in 1...8 {
                let weight = (k == 3 || k == 4 ? 1.6 : 1.0) / Double(k)
                value += weight * sine(phase * Double(k))
            }
            return Int16(max(-32767, min(32767, value * envelope * envelope * 6000)))
        default:
            advance()
            return next()
        }
    }

    /// Chooses the next segment: another syllable of the talkspurt (with a
    /// short gap between syllables), or a pause and a new talkspurt.
    private mutating func advance() {
        if case .syllable = segment, syllablesLeft > 0 {
            segment = .gap(remaining: uniform(1_000, 3_000))
            return
        }
        if syllablesLeft > 0 {
            syllablesLeft -= 1
            let length = uniform(7_200, 12_000)  // 150 to 250 ms
            let pitch = Double(uniform(100, 220))
            let glide = Double(uniform(0, 80) - 40) / Double(length)
            segment = .syllable(remaining: length, length: length, pitch: pitch, glide: glide)
            return
        }
        if case .pause = segment {
            syllablesLeft = uniform(4, 10)
            segment = .gap(remaining: 0)
            return
        }
        segment = .pause(remaining: uniform(14_400, 48_000))  // 0.3 to 1 s
    }

    /// Sine of `turns` full turns.
    private func sine(_ turns: Double) -> Double {
        let position = turns - Double(Int(turns))
        let index = Int(position * Double(table.count)) & (table.count - 1)
        return table[index]
    }

    private mutating func uniform(_ low: Int, _ high: Int) -> Int {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        return low + Int(random % UInt64(high - low + 1))
    }

    /// One period of sine, by rotating a unit vector by 2π/count per step;
    /// the step's cosine and sine come from their Taylor series.
    static func sineTable(count: Int) -> [Double] {
        let angle = 2 * Double.pi / Double(count)
        let a2 = angle * angle
        let cosStep = 1 - a2 / 2 + a2 * a2 / 24 - a2 * a2 * a2 / 720
        let sinStep = angle * (1 - a2 / 6 + a2 * a2 / 120 - a2 * a2 * a2 / 5040)
        var table = [Double](repeating: 0, count: count)
        var c = 1.0
        var s = 0.0
        for i in 0..<count {
            table[i] = s
            (c, s) = (c * cosStep - s * sinStep, s * cosStep + c * sinStep)
        }
        return table
    }
}
