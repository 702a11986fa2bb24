import Recording
import Testing
import Wire

private func at(_ ms: Int64) -> Instant { Instant(nanoseconds: ms * 1_000_000) }

@Test func startsOnTheFirstKeyframeAndSwitchesUpOnAHigherOne() {
    var c = RecordedLayerChoice(layerCount: 3)
    #expect(c.packet(layer: 2, startsKeyframe: false, now: at(0)) == .ignore)
    #expect(c.packet(layer: 0, startsKeyframe: true, now: at(0)) == .switchTo(0))
    #expect(c.packet(layer: 0, startsKeyframe: false, now: at(10)) == .record)
    #expect(c.wantedLayer(now: at(10)) == 2)
    #expect(c.packet(layer: 1, startsKeyframe: false, now: at(20)) == .ignore)
    #expect(c.packet(layer: 2, startsKeyframe: true, now: at(30)) == .switchTo(2))
    #expect(c.current == 2)
}

@Test func switchesDownOnlyWhenTheLayerWrittenFallsSilent() {
    var c = RecordedLayerChoice(layerCount: 3, silence: .seconds(1))
    _ = c.packet(layer: 2, startsKeyframe: true, now: at(0))
    #expect(c.packet(layer: 1, startsKeyframe: true, now: at(500)) == .ignore)
    // Layer 2 stopped at 0; by 1,100 ms it is silent.
    #expect(c.packet(layer: 0, startsKeyframe: true, now: at(1100)) == .ignore)  // 1 is higher and arriving
    #expect(c.packet(layer: 1, startsKeyframe: true, now: at(1200)) == .switchTo(1))
}
