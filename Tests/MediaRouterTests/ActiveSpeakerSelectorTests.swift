import Forwarding
import RoomProtocol
import Testing
import Wire

@testable import MediaRouter

@Suite struct ActiveSpeakerSelectorTests {
    private let t0 = Instant(nanoseconds: 1_000_000_000)

    @Test func speakersAreAnnouncedLoudestFirstOnlyOnChangeAndAtMostThreeTimesASecond() throws {
        var selector = ActiveSpeakerSelector()
        let loud = AudioActivity(speechFraction: 1, level: 0.3)
        let soft = AudioActivity(speechFraction: 1, level: 0.1)
        let quiet = AudioActivity(speechFraction: 0, level: 0)
        func step(_ a: [(String, AudioActivity)], at ms: Int) -> [(participant: ParticipantID, level: Double)]? {
            selector.update(a.map { (ParticipantID($0.0), $0.1) }, now: t0 + .milliseconds(ms))
        }
        // Smoothing: one full window of speech reaches 0.5 >= 0.3.
        let first = try #require(step([("a", soft), ("b", loud), ("c", quiet)], at: 0))
        #expect(first.map(\.participant.description) == ["b", "a"])
        #expect(abs(first[0].level - 0.15) < 1e-9)
        // "a" gets louder than "b" 100 ms later: too soon, held back...
        let louder = AudioActivity(speechFraction: 1, level: 0.9)
        let tooSoon = step([("a", louder), ("b", loud)], at: 100)
        #expect(tooSoon == nil)
        #expect(selector.current.map(\.description) == ["b", "a"])
        // ...and announced once the interval has passed.
        let next = try #require(step([("a", louder), ("b", loud)], at: 400))
        #expect(next.map(\.participant.description) == ["a", "b"])
        // The same speakers again: nothing to announce.
        let same = step([("a", louder), ("b", loud)], at: 900)
        #expect(same == nil)
        // Everyone stops: smoothed speech fades below the threshold in two
        // windows (1 -> 0.5 -> 0.25), then the list empties.
        let fading = step([("a", quiet), ("b", quiet)], at: 1300)
        #expect(fading == nil)
        let silent = try #require(step([("a", quiet), ("b", quiet)], at: 1700))
        #expect(silent.isEmpty)
        // A track that left stops speaking at once.
        _ = step([("a", louder)], at: 2100)
        let gone = try #require(step([], at: 2500))
        #expect(gone.isEmpty)
    }

    /// Several audio tracks of one participant count once, by the loudest;
    /// a window of the same speakers again announces nothing.
    @Test func aParticipantWithTwoAudioTracksCountsByItsLoudest() throws {
        var selector = ActiveSpeakerSelector()
        let a = ParticipantID("a")
        selector.beginWindow()
        selector.record(a, AudioActivity(speechFraction: 1, level: 0.1))
        selector.record(a, AudioActivity(speechFraction: 1, level: 0.5))
        selector.record(ParticipantID("b"), AudioActivity(speechFraction: 1, level: 0.2))
        let announced = selector.endWindow(now: t0)
        let first = try #require(announced)
        #expect(first.map(\.participant) == [a, ParticipantID("b")])
        #expect(abs(first[0].level - 0.25) < 1e-9)
        selector.beginWindow()
        selector.record(ParticipantID("b"), AudioActivity(speechFraction: 1, level: 0.2))
        selector.record(a, AudioActivity(speechFraction: 1, level: 0.5))
        let again = selector.endWindow(now: t0 + .seconds(1))
        #expect(again == nil)
        #expect(!selector.windowIsEmpty)
    }
}
