import Testing

/// Every test that drives headless Chromium, one at a time: each starts a
/// browser with several tabs encoding 720p video, and two of them side by
/// side on two cores starve each other (the encoder drops its upper
/// simulcast layers and frames freeze). Nested suites inherit
/// `.serialized`, which otherwise orders tests within one suite only.
/// The Firefox ESR cases (FirefoxNamespaceTests) belong here for the same
/// reason.
@Suite(.serialized) struct ChromiumSuite {}

extension ChromiumSuite {
    /// A layer switch must not freeze the subscriber's video: the frames of
    /// the old layer keep coming until the new layer's keyframe, so a gap
    /// the server causes (a switch before the keyframe, a lost keyframe
    /// waiting for the next one) shows as a freeze of a second or more.
    /// CI on two cores, where four tabs encode and decode 720p beside the
    /// server, once counted one freeze at a switch to 1280x720 on four
    /// workers (Chromium's threshold at 20 fps is 200 ms: max(3 x 50 ms,
    /// 50 + 150 ms)); six runs here, three of them beside a CPU hog on both
    /// cores, counted none. One short freeze (under half a second in all)
    /// is tolerated, never more.
    static func expectNoFreeze(during change: [String: Any]) {
        let freezes = (change["freezesAfter"] as? Int ?? 0) - (change["freezesBefore"] as? Int ?? 0)
        let seconds = (change["freezeSecondsAfter"] as? Double ?? 0) - (change["freezeSecondsBefore"] as? Double ?? 0)
        #expect(freezes <= 1, "\(change)")
        #expect(freezes == 0 || seconds < 0.5, "a \(seconds) s freeze at the switch: \(change)")
    }
}
