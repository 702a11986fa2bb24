import Foundation
import Testing

extension ChromiumSuite {
    /// Swiftlet's own room page (`/`, served by the server) in three headless
    /// Chromium tabs: each publishes its fake camera with three simulcast
    /// layers and decodes the other two; the stats overlay shows a bitrate and
    /// a received layer; a dropped WebSocket reconnects as the same
    /// participant. Saves a screenshot of one page (.build/artifacts).
    @Suite struct ChromiumPageRoomTests {
        @Test(.timeLimit(.minutes(1)))
        func threeRoomPagesEachDecodeTheOtherTwoAndSurviveABlip() throws {
            let swiftlet = try LoopbackSwiftlet()
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript(
                "chromium_page_room.py", tokens: swiftlet.tokens(for: ["alice", "bob", "carol"], room: "page-room"),
                timeout: .seconds(58))
            #expect(result["errors"] == nil, "\(result)")
            let pages = try #require(result["pages"] as? [[String: Any]], "\(result)")
            #expect(pages.count == 3)
            let ids = Set(pages.compactMap { $0["participantId"] as? String })
            #expect(ids.count == 3)
            for page in pages {
                let tiles = try #require(page["tiles"] as? [[String: Any]], "\(page)")
                let own = page["participantId"] as? String ?? ""
                // The other two, by participant id, with their names.
                #expect(Set(tiles.compactMap { $0["participantId"] as? String }) == ids.subtracting([own]), "\(page)")
                #expect(Set(tiles.compactMap { $0["identity"] as? String }).count == 2, "\(page)")
                for tile in tiles {
                    #expect((tile["frameWidth"] as? Int ?? 0) > 0, "\(tile)")
                    #expect((tile["framesDecoded"] as? Int ?? 0) > 0, "\(tile)")
                    #expect((tile["bitrateKbps"] as? Int ?? 0) > 0, "\(tile)")
                    // The forwarded layer, as the server's stream-state says.
                    #expect((0...2).contains(tile["layer"] as? Int ?? -1), "\(tile)")
                    #expect(tile["layerSource"] as? String == "stream-state", "\(tile)")
                    #expect(tile["streamState"] as? String == "active", "\(tile)")
                    #expect((tile["trackId"] as? String ?? "").hasPrefix("TR_"), "\(tile)")
                }
                #expect(page["framesRising"] as? Bool == true, "\(page)")
            }
            let reconnect = try #require(result["reconnect"] as? [String: Any], "\(result)")
            #expect(reconnect["sameParticipant"] as? Bool == true, "\(reconnect)")
            #expect(reconnect["framesRising"] as? Bool == true, "\(reconnect)")
            let screenshot = try #require(result["screenshot"] as? String)
            let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(screenshot) is a PNG")
            print("room page screenshot: \(screenshot)")
        }
    }
}
