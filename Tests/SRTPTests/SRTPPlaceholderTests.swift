import Testing
@testable import SRTP

@Test func moduleBuilds() {}
