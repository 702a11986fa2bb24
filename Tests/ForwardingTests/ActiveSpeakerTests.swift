import Testing
import Wire

@testable import Forwarding

@Suite struct ActiveSpeakerTests {
    private let t0 = Instant(nanoseconds: 1_000_000_000)

    private func window(speech: Int, silence: Int, dBov: UInt8) -> AudioActivity {
        var w = AudioLevelWindow()
        for _ in 0..<speech { w.record(dBov: dBov) }
        for _ in 0..<silence { w.record(dBov: 127) }
        return w.take()
    }

    @Test func aWindowMeasuresTheShareAndLoudnessOfSpeech() {
        let a = window(speech: 5, silence: 15, dBov: 20)
        #expect(a.speechFraction == 0.25)
        // -20 dBov is a tenth of full scale.
        #expect(abs(a.level - 0.1) < 1e-9)
        #expect(window(speech: 0, silence: 10, dBov: 0) == AudioActivity(speechFraction: 0, level: 0))
        var empty = AudioLevelWindow()
        let none = empty.take()
        #expect(none == AudioActivity(speechFraction: 0, level: 0))
        // Out-of-range levels (the field is 7 bits) count as silence.
        var odd = AudioLevelWindow()
        odd.record(dBov: 255)
        let oddActivity = odd.take()
        #expect(oddActivity.speechFraction == 0)
    }
}

@Suite struct LayerBitrateMeterTests {
    @Test func ratesArePerLayerAndCumulativeOverTemporalLayers() {
        var meter = LayerBitrateMeter()
        let t0 = Instant(nanoseconds: 5_000_000_000)
        // One second: layer 0 sends 100 packets of 125 bytes on TID 0 and 100
        // on TID 1 (100 kbit/s each); layer 2 sends 250 packets of 1000
        // bytes on TID 0 (2 Mbit/s); layer 1 is silent.
        for i in 0..<100 {
            let t = t0 + .milliseconds(i * 10)
            meter.record(spatial: 0, temporal: 0, payloadBytes: 125, now: t)
            meter.record(spatial: 0, temporal: 1, payloadBytes: 125, now: t)
        }
        for i in 0..<250 { meter.record(spatial: 2, temporal: 0, payloadBytes: 1000, now: t0 + .milliseconds(i * 4)) }
        let early = meter.poll(now: t0 + .milliseconds(999))
        #expect(!early)
        #expect(meter.bitrate(spatial: 0, upToTemporal: 3) == Bitrate(bitsPerSecond: 0))
        let closed = meter.poll(now: t0 + .seconds(1))
        #expect(closed)
        #expect(meter.bitrate(spatial: 0, upToTemporal: 0) == .kbps(100))
        #expect(meter.bitrate(spatial: 0, upToTemporal: 1) == .kbps(200))
        #expect(meter.bitrate(spatial: 2, upToTemporal: 3) == .mbps(2))
        #expect(meter.isSending(spatial: 0) && !meter.isSending(spatial: 1) && meter.isSending(spatial: 2))
        #expect(meter.cumulativeRates == LayerRates([[.kbps(100), .kbps(200)], [], [.mbps(2)]]))
        // Out-of-range layers never trap; they fold into the edges.
        meter.record(spatial: 9, temporal: -3, payloadBytes: 1, now: t0 + .seconds(1))
        #expect(meter.bitrate(spatial: 7, upToTemporal: 0) == Bitrate(bitsPerSecond: 0))
        // A second with only that byte: the rates fall to it.
        let again = meter.poll(now: t0 + .seconds(2))
        #expect(again)
        #expect(meter.bitrate(spatial: 0, upToTemporal: 3) == .kbps(0))
        #expect(meter.bitrate(spatial: 2, upToTemporal: 0) == Bitrate(bitsPerSecond: 8))
    }
}
