import Testing

@testable import SwiftletServer

@Suite struct RoomSpreadOptionTests {
    @Test func roomSpreadAfterComesFromTheFlagOrTheEnvironmentAndIsBounded() throws {
        #expect(try ServeOptions.parse(["--dev"]).roomSpreadAfter == 8)
        #expect(try ServeOptions.parse(["--dev", "--room-spread-after", "1"]).roomSpreadAfter == 1)
        #expect(try ServeOptions.parse(["--dev"], environment: ["SWIFTLET_ROOM_SPREAD_AFTER": "0"]).roomSpreadAfter == 0)
        #expect(throws: (any Error).self) { try ServeOptions.parse(["--dev", "--room-spread-after", "-1"]) }
        #expect(throws: (any Error).self) { try ServeOptions.parse(["--dev", "--room-spread-after", "many"]) }
    }
}
