import Testing
@testable import Codecs

@Test func moduleBuilds() {}
