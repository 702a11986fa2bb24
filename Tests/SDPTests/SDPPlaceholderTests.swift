import Testing
@testable import SDP

@Test func moduleBuilds() {}
