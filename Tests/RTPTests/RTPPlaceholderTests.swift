import Testing
@testable import RTP

@Test func moduleBuilds() {}
