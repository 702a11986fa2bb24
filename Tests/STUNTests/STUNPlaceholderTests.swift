import Testing
@testable import STUN

@Test func moduleBuilds() {}
