import Foundation
import Testing

extension ChromiumSuite {
    /// Swiftlet's room page in two headless Chromium tabs (dev mode) when a
    /// page goes away or its media stops: no console error on any page
    /// load; a publisher that stops sending shows "reconnecting…" on the
    /// other's tile, cleared when it sends again; a page that navigates
    /// away, reloads or is closed leaves at once (its tile goes within
    /// about a second, not after the 20 s grace period) and comes back under
    /// the name kept in localStorage. Saves a screenshot (.build/artifacts).
    @Suite struct ChromiumPageLifecycleTests {
        @Test(.timeLimit(.minutes(2)))
        func pagesLeaveAtOnceKeepTheirNameShowStalledMediaAndLogNoErrors() throws {
            let swiftlet = try LoopbackSwiftlet(devMode: true)
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript("chromium_page_lifecycle.py", tokens: [], timeout: .seconds(85))
            #expect(result["errors"] == nil, "\(result)")
            let errors = try #require(result["loadErrors"] as? [String: [String]], "\(result)")
            #expect(errors.keys.sorted() == ["a", "aEnd", "b", "bReloaded", "call"], "\(errors)")
            for (page, logged) in errors { #expect(logged.isEmpty, "\(page): \(logged)") }

            let stall = try #require(result["stall"] as? [String: Any], "\(result)")
            #expect((stall["tile"] as? [String: Any])?["reconnecting"] as? Bool == true, "\(stall)")
            // Shown 1 to 1.5 s after the last frame (checked every 0.5 s), plus
            // the last frames in flight and the test's own 0.2 s polling.
            #expect((stall["after"] as? Double ?? 99) <= 2.5, "\(stall)")
            #expect((stall["cleared"] as? [String: Any])?["reconnecting"] as? Bool == false, "\(stall)")
            #expect(FileManager.default.fileExists(atPath: stall["screenshot"] as? String ?? ""))
            print("lifecycle screenshot: \(stall["screenshot"] ?? "")")

            for step in ["navigate", "reload"] {
                let info = try #require(result[step] as? [String: Any], "\(step): \(result)")
                // Gone within about a second: a leave, not the grace period.
                let gone = try #require(info["goneAfter"] as? Double, "\(step): the old tile stayed: \(info)")
                #expect(gone <= 1.5, "\(step): \(info)")
                #expect(info["newId"] as? String != info["oldId"] as? String, "\(step): \(info)")
                // The same name, from localStorage (the URL no longer has one).
                #expect(info["name"] as? String == "dave", "\(step): \(info)")
                #expect((info["tile"] as? [String: Any])?["identity"] as? String == "dave", "\(step): \(info)")
            }
            let close = try #require(result["close"] as? [String: Any], "\(result)")
            let gone = try #require(close["goneAfter"] as? Double, "the closed tab's tile stayed: \(close)")
            #expect(gone <= 1.5, "\(close)")
            let after = { (step: String) in "\((result[step] as? [String: Any])?["goneAfter"] ?? "-")" }
            print(
                "lifecycle: reconnecting shown \(stall["after"] ?? "-") s after the video stopped, cleared \(stall["clearedAfter"] ?? "-") s after it came back; old tile gone after navigate \(after("navigate")) s, reload \(after("reload")) s, close \(gone) s"
            )
        }
    }
}
