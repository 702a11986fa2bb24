/// The audio levels (RFC 6464) one published audio track carried since the
/// last look: how much of the time it held speech, and how loud that
/// speech was. Per packet it only adds to three counters.
package struct AudioLevelWindow: Sendable {
    /// Levels at or above this (in dBov, so numerically at or below) count
    /// as speech. -50 dBov is well above the comfort noise browsers send
    /// (-127 for digital silence, around -70 for a quiet room) and below
    /// normal speech (-20 to -40).
    package static let speechThreshold: UInt8 = 50

    private var packets: UInt32 = 0
    private var speechPackets: UInt32 = 0
    private var speechAmplitude: Double = 0

    package init() {}

    /// One packet's level: -`dBov` dBov (0 loudest, 127 silence; RFC 6464
    /// section 3 carries the magnitude).
    package mutating func record(dBov: UInt8) {
        packets &+= 1
        let level = min(dBov, 127)
        guard level <= Self.speechThreshold else { return }
        speechPackets &+= 1
        // Linear amplitude relative to full scale: 10^(-dBov / 20).
        speechAmplitude += Self.amplitude[Int(level)]
    }

    /// What the window held, and a fresh window.
    package mutating func take() -> AudioActivity {
        defer { self = AudioLevelWindow() }
        guard packets > 0 else { return AudioActivity(speechFraction: 0, level: 0) }
        let fraction = Double(speechPackets) / Double(packets)
        let level = speechPackets > 0 ? speechAmplitude / Double(speechPackets) : 0
        return AudioActivity(speechFraction: fraction, level: level)
    }

    /// 10^(-dB / 20) for dB in 0...50, computed once by repeated
    /// multiplication (the standard library has no pow for Double).
    private static let amplitude: [Double] = {
        // One decibel is an amplitude ratio of 10^(1/20).
        let step = 0.891_250_938_133_745_5
        var table: [Double] = []
        var value = 1.0
        for _ in 0...Int(speechThreshold) {
            table.append(value)
            value *= step
        }
        return table
    }()
}

/// One track's speech activity over a window.
package struct AudioActivity: Equatable, Sendable {
    /// Share of packets at speech level, 0...1.
    package var speechFraction: Double
    /// Mean linear amplitude of the speech packets, 0...1 (1 = full scale).
    package var level: Double
    package init(speechFraction: Double, level: Double) {
        self.speechFraction = speechFraction
        self.level = level
    }
}
