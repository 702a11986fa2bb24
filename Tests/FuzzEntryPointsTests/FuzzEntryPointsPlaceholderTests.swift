import Testing
@testable import FuzzEntryPoints

@Test func moduleBuilds() {}
