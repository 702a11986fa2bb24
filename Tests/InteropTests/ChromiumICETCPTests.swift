import Foundation
import NamespaceTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ChromiumSuite {
    /// ICE over TCP (RFC 6544) with a real browser on a network that drops
    /// UDP: Chromium in a network namespace whose nftables drop every UDP
    /// datagram in and out, the server in another namespace across a veth
    /// pair. Both room clients of the page (publisher and subscriber) can
    /// only reach the server through its passive TCP candidate; the
    /// subscriber must decode the publisher's camera, and getStats must
    /// show TCP on both selected pairs.
    @Suite struct ChromiumICETCPTests {
        static let serverIP = "10.77.41.1"
        static let clientIP = "10.77.41.2"

        @Test(.timeLimit(.minutes(1)))
        func chromiumWhoseUDPIsDroppedJoinsAndDecodesOverICETCP() throws {
            let namespaces: VethNamespaces
            do {
                namespaces = try VethNamespaces(
                    serverAddresses: ["\(Self.serverIP)/24"], clientAddresses: ["\(Self.clientIP)/24"])
                // Chromium treats a machine without a default route as offline.
                try namespaces.addRoute(in: namespaces.client, ["default", "via", Self.serverIP])
            } catch {
                print("skipped: no network namespace (\(error))")
                return
            }
            defer { namespaces.delete() }
            if let failure = Self.dropUDP(in: namespaces.client) {
                print("skipped: cannot drop UDP in the namespace (\(failure)); run Scripts/setup for nftables")
                return
            }
            let swiftlet = try namespaces.inside(namespaces.server) {
                try LoopbackSwiftlet(mediaBind: Self.serverIP, signalingIP: Self.serverIP, iceTCP: true)
            }
            defer { swiftlet.stop() }
            let result = try swiftlet.runScript(
                "chromium_room.py", tokens: swiftlet.tokens(for: ["camera", "viewer"], room: "tcp-only"),
                arguments: ["--seconds", "6"], timeout: .seconds(55), namespace: namespaces.client)
            #expect(result["errors"] == nil, "\(result)")
            #expect(result["publisher"] as? String == "connected", "\(result)")
            #expect(result["subscriber"] as? String == "connected", "\(result)")
            let paths = try #require(result["paths"] as? [String: Any], "\(result)")
            for side in ["publisher", "subscriber"] {
                let path = try #require(paths[side] as? [String: Any], "no selected pair on the \(side): \(result)")
                #expect(path["local"] as? String == "tcp", "\(side): \(path)")
                #expect(path["remote"] as? String == "tcp", "\(side): \(path)")
            }
            let video = try #require(result["video"] as? [String: Any], "no inbound video: \(result)")
            #expect((video["framesDecoded"] as? Int ?? 0) >= 30, "\(video)")
            #expect(video["frameWidth"] as? Int == 640)
            // The server's side: both PeerConnections came over its TCP
            // port, and media left framed on those connections.
            let tcp = try #require(swiftlet.media.snapshots().first?.iceTCP)
            #expect(tcp.accepted >= 2, "\(tcp)")
            #expect(tcp.framesReceived > 100 && tcp.framesSent > 100, "\(tcp)")
            #expect(tcp.framingErrors == 0, "\(tcp)")
        }

        /// Drops every UDP datagram leaving or entering `namespace`
        /// (nftables, `nft -f -`); nil on success, else what failed.
        static func dropUDP(in namespace: String) -> String? {
            let rules = """
                table inet swiftlet_no_udp {
                    chain out { type filter hook output priority 0; policy accept; meta l4proto udp drop; }
                    chain in { type filter hook input priority 0; policy accept; meta l4proto udp drop; }
                }
                """
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["ip", "netns", "exec", namespace, "nft", "-f", "-"]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            do { try process.run() } catch { return "\(error)" }
            input.fileHandleForWriting.write(Data(rules.utf8))
            try? input.fileHandleForWriting.close()
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning {
                process.terminate()
                return "nft timed out"
            }
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return process.terminationStatus == 0 ? nil : "nft: \(text)"
        }
    }
}
