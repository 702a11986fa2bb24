import Testing
@testable import ICE

@Test func moduleBuilds() {}
