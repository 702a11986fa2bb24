import Testing
@testable import RTCP

@Test func moduleBuilds() {}
