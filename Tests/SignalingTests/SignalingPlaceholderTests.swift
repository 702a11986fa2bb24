import Testing

@testable import Signaling

@Test func moduleBuilds() {}
