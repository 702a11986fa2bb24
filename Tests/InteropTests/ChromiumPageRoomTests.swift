import Foundation
import Testing

extension ChromiumSuite {
    /// Swiftlet's own room page (`/`, served by the server) in three headless
    /// Chromium tabs: each publishes its fake camera with three simulcast
    /// layers and decodes the other two; the stats overlay shows a bitrate and
    /// a received layer; "auto" sends each tile's rendered width and the
    /// frames fit it; a muted camera shows on the others' tiles; a dropped
    /// WebSocket reconnects as the same participant. Saves a screenshot of
    /// one page (.build/artifacts).
    @Suite struct ChromiumPageRoomTests {
        @Test(.timeLimit(.minutes(1)))
        func threeRoomPagesDecodeEachOtherShowMutesFitTilesAndSurviveABlip() throws {
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
                    // Live video is not taken for stalled.
                    #expect(tile["reconnecting"] as? Bool == false, "\(tile)")
                    // The forwarded layer, as the server's stream-state says.
                    #expect((0...2).contains(tile["layer"] as? Int ?? -1), "\(tile)")
                    #expect(tile["layerSource"] as? String == "stream-state", "\(tile)")
                    #expect(tile["streamState"] as? String == "active", "\(tile)")
                    #expect((tile["trackId"] as? String ?? "").hasPrefix("TR_"), "\(tile)")
                }
                #expect(page["framesRising"] as? Bool == true, "\(page)")
            }
            // "auto": each tile sent its rendered width; the frames fit it.
            let auto = try #require(result["auto"] as? [String: Any], "\(result)")
            #expect(auto.count == 3, "\(auto)")
            for case let (name, page as [String: Any]) in auto {
                let tiles = try #require(page["tiles"] as? [[String: Any]], "\(name): \(page)")
                #expect(tiles.count == 2, "\(name): \(tiles)")
                for tile in tiles {
                    let sent = tile["autoMaxWidth"] as? Int ?? 0
                    #expect(sent == tile["renderedWidth"] as? Int, "\(name): \(tile)")
                    // Three tiles a row in a 1280-pixel window: well under
                    // the top layer's 1280.
                    #expect((200..<640).contains(sent), "\(name): \(tile)")
                    let width = tile["frameWidth"] as? Int ?? 0
                    #expect(width > 0 && width <= sent, "\(name): \(tile)")
                }
            }
            let resize = try #require(result["resize"] as? [String: Any], "\(result)")
            let widthsBefore = try #require(resize["before"] as? [Int], "\(resize)")
            let widthsAfter = try #require(resize["after"] as? [Int], "\(resize)")
            #expect(widthsAfter.count == 2 && widthsAfter.min() ?? 0 > widthsBefore.max() ?? .max, "\(resize)")
            // Mute: the others see the badge on the muter's tile, then not.
            let mute = try #require(result["mute"] as? [String: Any], "\(result)")
            let muterID = try #require(pages[1]["participantId"] as? String)
            let ownTracks = try #require(mute["ownTracks"] as? [[String: Any]], "\(mute)")
            #expect(Set(ownTracks.compactMap { $0["kind"] as? String }) == ["audio", "video"], "\(ownTracks)")
            #expect(ownTracks.allSatisfy { ($0["id"] as? String ?? "").hasPrefix("TR_") }, "\(ownTracks)")
            let muted = try #require(mute["muted"] as? [[String: Any]], "\(mute)")
            let unmuted = try #require(mute["unmuted"] as? [[String: Any]], "\(mute)")
            #expect(muted.count == 2 && unmuted.count == 2, "\(mute)")
            for tile in muted {
                #expect(tile["participantId"] as? String == muterID, "\(tile)")
                #expect(tile["videoMuted"] as? Bool == true, "\(tile)")
                #expect(tile["audioMuted"] as? Bool == false, "\(tile)")
                #expect(tile["badge"] as? String == "camera muted", "\(tile)")
            }
            for tile in unmuted {
                #expect(tile["videoMuted"] as? Bool == false, "\(tile)")
                #expect(tile["badge"] as? String == "", "\(tile)")
            }
            #expect(mute["mutedLog"] as? Bool == true, "\(mute)")
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
