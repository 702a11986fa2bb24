import Testing

@testable import Forwarding

@Test func moduleBuilds() {}
