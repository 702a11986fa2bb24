import Testing

/// Every test that drives headless Chromium, one at a time: each starts a
/// browser with several tabs encoding 720p video, and two of them side by
/// side on two cores starve each other (the encoder drops its upper
/// simulcast layers and frames freeze). Nested suites inherit
/// `.serialized`, which otherwise orders tests within one suite only.
/// The Firefox ESR cases (FirefoxNamespaceTests) belong here for the same
/// reason.
@Suite(.serialized) struct ChromiumSuite {}
