import Foundation
import Testing

extension ChromiumSuite {
    /// Issue #5 in headless Chromium: one room page publishes the 1280x720 fake
    /// camera with three simulcast layers; three subscribe-only pages ask for
    /// low, medium and high and receive frames 320, 640 and 1280 wide, decoding
    /// continuously; a subscriber that changes its preference gets the new
    /// width within 2 s while it keeps decoding and does not freeze.
    ///
    /// Also on four workers with `--room-spread-after 1` (issue #13): the
    /// four pages sit on four workers, so each subscriber's layers, its
    /// stream-state and its switches cross a ring from the publisher's
    /// worker.
    @Suite struct ChromiumSimulcastTests {
        @Test(.timeLimit(.minutes(1)), arguments: [1, 4])
        func subscribersReceiveTheLayerTheyAskForAndSwitchWithoutFreezing(workers: Int) throws {
            let swiftlet = try LoopbackSwiftlet(workers: workers, roomSpreadAfter: 1)
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript(
                "chromium_simulcast.py",
                tokens: swiftlet.tokens(for: ["publisher", "sub-low", "sub-medium", "sub-high"], room: "simulcast"),
                arguments: ["--switches", "2", "--rise-seconds", "25", "--deadline", "56"], timeout: .seconds(58))
            #expect(result["errors"] == nil, "\(result)")
            let rise = try #require(result["riseSeconds"] as? [String: Any], "\(result)")
            #expect(Set(rise.keys) == ["low", "medium", "high"], "layers not reached: \(result["notReached"] ?? "")")

            let steady = try #require(result["steady"] as? [String: [String: Any]], "\(result)")
            for (preference, width) in [("low", 320), ("medium", 640), ("high", 1280)] {
                let page = try #require(steady[preference], "\(steady)")
                #expect(page["frameWidth"] as? Int == width, "\(preference): \(page)")
                #expect(page["framesRising"] as? Bool == true, "\(preference): \(page)")
                #expect(page["newFreezes"] as? Int == 0, "\(preference): \(page)")
                // The server's stream-state names the layer forwarded.
                #expect(page["streamLayer"] as? Int == ["low": 0, "medium": 1, "high": 2][preference], "\(preference): \(page)")
            }

            // The script's switches: the low subscriber goes up to high, then
            // the medium one up to high.
            let switches = try #require(result["switches"] as? [[String: Any]], "\(result)")
            #expect(switches.count == 2, "\(result)")
            for change in switches {
                let latency = try #require(change["latencyMs"] as? Int, "no new width within 2 s: \(change)")
                #expect(latency <= 2000, "\(change)")
                let before = change["framesDecodedBefore"] as? Int ?? 0
                #expect((change["framesDecodedAfter"] as? Int ?? 0) > before, "\(change)")
                ChromiumSuite.expectNoFreeze(during: change)
            }
            // Read at the end while the pages are up.
            let metrics = try #require(result["metrics"] as? [String: Double], "\(result)")
            if workers > 1 {
                // A page per worker, packets relayed, none dropped at a full ring.
                for w in 0..<workers {
                    #expect((metrics["swiftlet_worker_transports{worker=\"\(w)\"}"] ?? 0) > 0, "worker \(w): \(metrics)")
                }
                #expect((metrics["swiftlet_relay_packets_sent_total"] ?? 0) > 0, "\(metrics)")
                #expect(metrics["swiftlet_relay_ring_drops_total"] == 0, "\(metrics)")
            }
            // What the workers dropped, for the log (unknown_relay: relayed
            // packets that reached a worker before the relay command).
            let drops = metrics.filter { $0.key.hasPrefix("swiftlet_dropped_packets_total") && $0.value > 0 }
            print(
                "chromium simulcast on \(workers) workers: \(result["seconds"] ?? "?") s, rise \(rise), switch latency \(result["switchLatencyMs"] ?? ""), drops \(drops)"
            )
        }
    }
}
