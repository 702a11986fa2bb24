import Testing

@testable import Negotiation

@Test func moduleBuilds() {}
