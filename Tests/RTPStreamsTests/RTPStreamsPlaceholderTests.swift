import Testing

@testable import RTPStreams

@Test func moduleBuilds() {}
