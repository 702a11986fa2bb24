import Foundation
import NamespaceTesting
import Testing

extension ChromiumSuite {
    /// GStreamer 1.22's `webrtcbin` (Debian, driven from the system python3
    /// by Scripts/interop/gst_webrtcbin.py) against a real `swiftlet serve
    /// --dev`, both inside a network namespace this test makes
    /// (`BrowserNamespace`): libnice gathers no loopback candidate. Each
    /// case is one `pair` run: a WHIP publisher, then, a second later, a
    /// WHEP player whose first keyframe comes from our PLI (the encoders'
    /// keyframe interval is 100 s). Skipped, with the reason printed, where
    /// namespaces cannot be made or webrtcbin is missing. In ChromiumSuite
    /// for its CPU: two encoders and two decoders.
    @Suite struct GStreamerNamespaceTests {
        static let python = "/usr/bin/python3"
        static let driver = LoopbackSwiftlet.root.appendingPathComponent("Scripts/interop/gst_webrtcbin.py").path

        /// Why webrtcbin cannot run here, or nil when it can.
        static func missingGStreamer() -> String? {
            guard FileManager.default.isExecutableFile(atPath: python) else { return "no \(python)" }
            do {
                let child = try JSONLineProcess(
                    executable: URL(fileURLWithPath: python), arguments: [driver, "check"],
                    workingDirectory: LoopbackSwiftlet.root)
                let result = try child.receive("gst_webrtcbin.py check", timeout: .seconds(15))
                let missing = result["missing"] as? [String] ?? ["?"]
                return missing.isEmpty ? nil : "missing GStreamer elements \(missing) (run Scripts/setup)"
            } catch {
                return "python3-gst-1.0 unusable (run Scripts/setup): \(error)"
            }
        }

        /// Runs `gst_webrtcbin.py pair` once per (codec, bundle policy) in
        /// one fresh namespace with one dev server, each in its own room;
        /// nil when skipped.
        static func run(_ cases: [(codec: String, policy: String)]) throws -> [[String: Any]]? {
            if let reason = missingGStreamer() {
                print("GStreamerNamespaceTests skipped: \(reason)")
                return nil
            }
            let namespace: BrowserNamespace
            do {
                namespace = try BrowserNamespace()
            } catch {
                print("GStreamerNamespaceTests skipped: cannot make a network namespace: \(error)")
                return nil
            }
            defer { namespace.delete() }
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("\(namespace.name).log")
            defer { try? FileManager.default.removeItem(at: log) }
            let server = try namespace.startDevServer(log: log)
            defer { BrowserNamespace.stop(server) }
            var results: [[String: Any]] = []
            for (index, c) in cases.enumerated() {
                let child = try JSONLineProcess(
                    executable: URL(fileURLWithPath: "/usr/bin/env"),
                    arguments: [
                        "ip", "netns", "exec", namespace.name, python, driver, "pair", "--codec", c.codec,
                        "--bundle-policy", c.policy, "--room", "gst-\(index)-\(c.codec)-\(c.policy)", "--seconds", "1.5",
                    ], workingDirectory: LoopbackSwiftlet.root)
                // The driver bounds itself to about 20 s (5 s per wait).
                let result = try child.receive("gst_webrtcbin.py pair \(c.codec) \(c.policy)", timeout: .seconds(30))
                if (result["errors"] as? [Any])?.isEmpty == false {
                    let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                    print("server log (last 4000 characters):\n\(text.suffix(4000))")
                }
                print(
                    "webrtcbin \(c.codec) \(c.policy): first frame \(result["firstFrameSeconds"] ?? "-") s, "
                        + "frames \(result["frames"] ?? "-"), srtp \(result["publishSRTP"] ?? "-"), "
                        + "\(result["seconds"] ?? "-") s")
                results.append(result)
            }
            return results
        }

        /// What every accepted case must show: both POSTs answered, every
        /// answer section on the bundle's port (a bundle-only one included),
        /// decoded 320x240 video and Opus audio, the late player's first
        /// frame within 2 s, both sessions deleted.
        static func expectPlayed(_ result: [String: Any], offeredPorts: [Int]) {
            #expect((result["errors"] as? [Any])?.isEmpty == true, "\(result)")
            #expect(result["publishStatus"] as? Int == 201 && result["playStatus"] as? Int == 201, "\(result)")
            let offer = result["publishOffer"] as? [[String: Any]] ?? []
            #expect(offer.map { $0["port"] as? Int ?? -1 } == offeredPorts, "\(offer)")
            for key in ["publishAnswer", "playAnswer"] {
                let answer = result[key] as? [[String: Any]] ?? []
                #expect(answer.count == 2 && answer.allSatisfy { ($0["port"] as? Int ?? 0) != 0 }, "\(key): \(answer)")
            }
            #expect(result["size"] as? [Int] == [320, 240], "\(result)")
            #expect((result["frames"] as? Int ?? 0) > 10, "\(result)")
            #expect((result["audioBuffers"] as? Int ?? 0) > 10, "\(result)")
            let firstFrame = result["firstFrameSeconds"] as? Double ?? .infinity
            #expect(firstFrame < 2, "\(result)")
            #expect(result["delete"] as? [Int] == [200, 200], "\(result)")
        }

        /// VP8 + Opus under `max-bundle` (audio offered with port 0 and
        /// `a=bundle-only`; webrtcbin refused our answer while a section
        /// lacked a fingerprint) and `max-compat`; then `none`, webrtcbin's
        /// default, refused with a reason that names the fix
        /// (docs/WHIP_WHEP.md, "BUNDLE is required").
        @Test(.timeLimit(.minutes(1)))
        func webrtcbinPublishesAndPlaysVP8WithMaxBundleAndMaxCompatAndIsToldBundleIsRequired() throws {
            guard
                let results = try Self.run([
                    ("vp8", "max-bundle"), ("vp8", "max-compat"), ("vp8", "none"),
                ])
            else { return }
            Self.expectPlayed(results[0], offeredPorts: [9, 0])
            Self.expectPlayed(results[1], offeredPorts: [9, 9])
            let refused = results[2]
            #expect(refused["publishStatus"] as? Int == 400, "\(refused)")
            #expect((refused["publishRefusal"] as? String ?? "").contains("bundle-policy max-bundle or max-compat"), "\(refused)")
            // GStreamer 1.22's dtls elements offer only this profile.
            #expect(results[0]["publishSRTP"] as? [String] == ["aes-128-icm", "hmac-sha1-80"], "\(results[0])")
        }

        /// H.264 constrained baseline (x264enc, packetization mode 1) + Opus,
        /// published and played by webrtcbin under both bundle policies.
        @Test(.timeLimit(.minutes(1)))
        func webrtcbinPublishesAndPlaysH264WithMaxBundleAndMaxCompat() throws {
            guard let results = try Self.run([("h264", "max-bundle"), ("h264", "max-compat")]) else { return }
            Self.expectPlayed(results[0], offeredPorts: [9, 0])
            Self.expectPlayed(results[1], offeredPorts: [9, 9])
        }
    }
}
