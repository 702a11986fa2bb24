import Foundation
import NamespaceTesting
import Testing

extension ChromiumSuite {
    /// Firefox ESR against a real `swiftlet serve --dev`, both inside a
    /// network namespace this test makes (`BrowserNamespace`): Firefox
    /// pairs no 127.0.0.1 candidate. Driven over WebDriver BiDi by
    /// Scripts/interop/firefox_interop.py. Skipped, with the reason
    /// printed, where namespaces cannot be made (no root, no veth).
    @Suite struct FirefoxNamespaceTests {
        /// Runs `firefox_interop.py CASE` in a fresh namespace with a dev
        /// server; nil when the namespace cannot be made.
        static func run(_ testCase: String, limit: Duration) throws -> [String: Any]? {
            let python = LoopbackSwiftlet.root.appendingPathComponent(".venv/bin/python")
            try #require(FileManager.default.isExecutableFile(atPath: python.path), "run Scripts/setup: no \(python.path)")
            try #require(
                FileManager.default.isExecutableFile(atPath: "/usr/bin/firefox-esr"), "run Scripts/setup: no firefox-esr")
            let namespace: BrowserNamespace
            do {
                namespace = try BrowserNamespace()
            } catch {
                print("FirefoxNamespaceTests skipped: cannot make a network namespace: \(error)")
                return nil
            }
            defer { namespace.delete() }
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("\(namespace.name).log")
            defer { try? FileManager.default.removeItem(at: log) }
            let server = try namespace.startDevServer(log: log)
            defer { BrowserNamespace.stop(server) }
            let seconds = limit.components.seconds
            let child = try JSONLineProcess(
                executable: URL(fileURLWithPath: "/usr/bin/env"),
                arguments: [
                    "ip", "netns", "exec", namespace.name, python.path,
                    LoopbackSwiftlet.root.appendingPathComponent("Scripts/interop/firefox_interop.py").path,
                    testCase, "--limit", String(seconds - 3),
                ], workingDirectory: LoopbackSwiftlet.root)
            let result = try child.receive("the result of firefox_interop.py \(testCase)", timeout: limit)
            if result["errors"] != nil {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                print("server log (last 4000 characters):\n\(text.suffix(4000))")
            }
            return result
        }

        /// A WHIP publisher with `bundlePolicy: "max-bundle"` (what WHIP
        /// clients commonly set) sends its video section with port 0 and
        /// `a=bundle-only`; before RFC 8843 section 6 was honoured the
        /// answer rejected it and no video arrived. A WHEP player, also
        /// max-bundle, must decode it.
        @Test(.timeLimit(.minutes(1)))
        func firefoxPublishesThreeLayersOverWHIPWithMaxBundleAndFirefoxPlaysThemOverWHEP() throws {
            guard let result = try Self.run("whip", limit: .seconds(45)) else { return }
            #expect(result["errors"] == nil, "\(result)")
            print("firefox whip: seconds \(result["seconds"] ?? "-"), received \(result["received"] ?? "-")")
            let offer = try #require(result["publishOffer"] as? [[String: Any]], "\(result)")
            // What makes this case: Firefox's video section is bundle-only.
            #expect(offer.map { $0["port"] as? Int } == [9, 0], "\(offer)")
            #expect(offer.map { $0["bundleOnly"] as? Bool } == [false, true], "\(offer)")
            let answer = try #require(result["publishAnswer"] as? [[String: Any]], "\(result)")
            #expect(answer.count == 2 && answer.allSatisfy { ($0["port"] as? Int ?? 0) != 0 }, "\(answer)")
            // All three layers accepted (RFC 8853: the answer receives q;h;f).
            let rids = (answer.last?["simulcast"] as? String ?? "").split(separator: " ").last.map {
                Set($0.split(separator: ";").map(String.init))
            }
            #expect(rids == ["q", "h", "f"], "\(answer)")
            let playAnswer = try #require(result["playAnswer"] as? [[String: Any]], "\(result)")
            #expect(playAnswer.count == 2 && playAnswer.allSatisfy { ($0["port"] as? Int ?? 0) != 0 }, "\(playAnswer)")
            let sent = try #require(result["sent"] as? [String: Any], "\(result)")
            let layers = try #require(sent["layers"] as? [[String: Any]], "\(sent)")
            #expect(Set(layers.compactMap { $0["rid"] as? String }) == ["q", "h", "f"], "\(layers)")
            let received = try #require(result["received"] as? [String: Any], "\(result)")
            let width = received["videoWidth"] as? Int ?? 0
            let height = received["videoHeight"] as? Int ?? 0
            // One of the three layers of the 1280x720 camera, decoded.
            #expect([320, 640, 1280].contains(width) && width * 9 == height * 16, "\(received)")
            let inbound = try #require(received["inbound"] as? [String: Any], "\(received)")
            #expect((inbound["framesDecoded"] as? Int ?? 0) > 10, "\(inbound)")
        }

        /// The room page (the web client the server serves) unchanged in
        /// Firefox beside Chromium: each decodes the other; then Firefox's
        /// layer control asks for the low layer and the high one, and the
        /// decoded width follows.
        @Test(.timeLimit(.minutes(1)))
        func firefoxAndChromiumRoomPagesDecodeEachOtherAndFirefoxSwitchesLayers() throws {
            guard let result = try Self.run("room", limit: .seconds(50)) else { return }
            #expect(result["errors"] == nil, "\(result)")
            print("firefox room: seconds \(result["seconds"] ?? "-"), switch \(result["switch"] ?? "-")")
            let tiles = try #require(result["tiles"] as? [String: [[String: Any]]], "\(result)")
            let ids = try #require(result["ids"] as? [String: String], "\(result)")
            for (browser, other) in [("firefox", "chromium"), ("chromium", "firefox")] {
                let seen = try #require(tiles[browser], "\(result)")
                #expect(seen.count == 1 && seen[0]["participantId"] as? String == ids[other], "\(browser): \(seen)")
                #expect((seen.first?["framesDecoded"] as? Int ?? 0) > 0, "\(browser): \(seen)")
                #expect((seen.first?["frameWidth"] as? Int ?? 0) > 0, "\(browser): \(seen)")
            }
            let switched = try #require(result["switch"] as? [String: [String: Any]], "\(result)")
            let low = switched["low"]?["frameWidth"] as? Int ?? 0
            let high = switched["high"]?["frameWidth"] as? Int ?? 0
            #expect(low > 0 && low <= 320 && switched["low"]?["layer"] as? Int == 0, "\(switched)")
            #expect(high > low, "\(switched)")
            let errors = result["consoleErrors"] as? [String: [String]] ?? [:]
            #expect(errors["firefox"] == [], "\(errors)")
        }
    }
}
