import Testing
@testable import DTLS

@Test func moduleBuilds() {}
