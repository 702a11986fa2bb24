import Foundation
import RedisTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ClusterProcessSuite {
    /// Issue #15, test 2's relay checks: what crosses a relay follows the
    /// far node's demand, not its number of subscribers. Node A holds one
    /// participant of a room (the publisher, VP8 simulcast and Opus), B
    /// and C four each. Two subscribers on one far node; two more on the
    /// same node leave the relay's bytes (against the publisher's ingress)
    /// flat while that node's egress doubles; two subscribers capped at the
    /// lowest layer (`--layout 5x5`) on the other node get only that layer
    /// and the audio over their relay. Real processes, a
    /// real Redis, all on loopback (127.0.0.1 to 127.0.0.3).
    @Suite(.serialized) struct ClusterCascadeRelayProcessTests {
        private let cluster = ClusterProxyProcessTests()
        private typealias Cascade = ClusterCascadeTesting

        /// Over `seconds`: bytes per second the publisher sent A, A sent
        /// over the relay to `far`, and `far` sent its subscribers.
        private func window(
            _ nodes: [String: ClusterProxyProcessTests.Node], far: String, seconds: Double
        ) throws -> (
            ingress: Double, relay: Double, egress: Double
        ) {
            func read() throws -> (Double, Double, Double) {
                let a = try serverMetrics(nodes["node-a"]!.url)
                let f = try serverMetrics(nodes[far]!.url)
                // The far node's media egress: its RTP bytes less the
                // padding it sends to probe its subscribers' bandwidth.
                return (
                    a["swiftlet_rtp_bytes_received_total"] ?? 0,
                    Cascade.sum(a, "swiftlet_cluster_relay_bytes_total", ["peer=\"\(far)~", "direction=\"out\""]),
                    (f["swiftlet_rtp_bytes_sent_total"] ?? 0) - (f["swiftlet_probe_bytes_sent_total"] ?? 0)
                )
            }
            let before = try read()
            usleep(useconds_t(seconds * 1_000_000))
            let after = try read()
            return ((after.0 - before.0) / seconds, (after.1 - before.1) / seconds, (after.2 - before.2) / seconds)
        }

        /// Until `far`'s subscribers receive the top layer (their
        /// estimates ramp up by probing from the first allocation, which the
        /// source's layer reports price: 6 to 20 s) and 2 s more, at most
        /// 30 s: one-second windows
        /// until each subscriber gets at least half of what the relay
        /// carries (the top layer and the audio are about two thirds of it,
        /// the middle layer and the audio about a quarter).
        private func settle(
            _ nodes: [String: ClusterProxyProcessTests.Node], far: String, subscribers: Int
        ) throws {
            let start = Date()
            var settled = false
            while !settled, Date().timeIntervalSince(start) < 30 {
                let w = try window(nodes, far: far, seconds: 1)
                settled = w.egress / Double(subscribers) >= 0.5 * w.relay
            }
            print(
                "cascade relay: \(subscribers) subscribers on \(far) settled: \(settled) after \(Int(Date().timeIntervalSince(start))) s"
            )
            usleep(2_000_000)
        }

        /// A `seconds` window over `far` taken while its `subscribers` get,
        /// on average, at least 0.6 of what the relay carries each (the top
        /// layer and the audio are about 0.68 of it; one subscriber on the
        /// middle layer brings two down to 0.46): a subscriber's estimate can
        /// still dip for a moment after settling (a failed probe, a
        /// loss-based step down on a loaded machine), and the egress
        /// comparison is about subscribers on the same layer. Up to five
        /// tries; the last window is returned either way, so a node that
        /// never holds the layer still fails the checks.
        private func steadyWindow(
            _ nodes: [String: ClusterProxyProcessTests.Node], far: String, subscribers: Int, seconds: Double
        ) throws -> (ingress: Double, relay: Double, egress: Double) {
            var w = try window(nodes, far: far, seconds: seconds)
            var tries = 1
            while w.egress / Double(subscribers) < 0.6 * w.relay, tries < 5 {
                print("cascade relay: \(subscribers) subscribers on \(far) not all on the top layer in this window; again")
                w = try window(nodes, far: far, seconds: seconds)
                tries += 1
            }
            return w
        }

        @Test(.timeLimit(.minutes(2)))
        func relayBytesFollowTheFarNodesDemandNotItsSubscribers() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            var nodes: [String: ClusterProxyProcessTests.Node] = [:]
            defer { for n in nodes.values { n.stop() } }
            nodes["node-a"] = try cluster.start(
                "127.0.0.1", "node-a", redis: redis, ["--room-node-capacity", "1", "--workers", "1", "--region", "here"])
            for (i, name) in ["node-b", "node-c"].enumerated() {
                nodes[name] = try cluster.start(
                    "127.0.0.\(i + 2)", name, redis: redis, ["--room-node-capacity", "4", "--workers", "1", "--region", "there"])
            }
            #expect(
                cluster.wait(15) {
                    nodes.values.allSatisfy { $0.metric("swiftlet_cluster_relay_links{state=\"connected\"}") == 2 }
                })
            let a = nodes["node-a"]!

            var bots: [RoomBotFailureTests.BotProcess] = []
            defer { for b in bots where b.process.isRunning { kill(b.process.processIdentifier, SIGKILL) } }
            func roombot(_ extra: [String]) throws -> RoomBotFailureTests.BotProcess {
                let bot = try Cascade.roombot(a.url, room: "demand", ["--ramp", "4", "--duration", "90"] + extra)
                bots.append(bot)
                return bot
            }

            // The publisher on A, two subscribers on one far node (X).
            let first = try roombot(["--publishers", "1", "--subscribers", "2"])
            #expect(first.wait(for: " 4 flowing", seconds: 25), "\(first.output)")
            let far = try #require(Cascade.holders(redis, "demand", holding: "-subscriber-").first)
            try settle(nodes, far: far, subscribers: 2)
            let two = try steadyWindow(nodes, far: far, subscribers: 2, seconds: 4)

            // Two more subscribers on X: same relay bytes, twice the egress.
            let second = try roombot(["--publishers", "0", "--subscribers", "2"])
            #expect(second.wait(for: " 4 flowing", seconds: 20), "\(second.output)")
            #expect(Cascade.holders(redis, "demand", holding: "-subscriber-") == [far])
            try settle(nodes, far: far, subscribers: 4)
            let four = try steadyWindow(nodes, far: far, subscribers: 4, seconds: 4)
            let relayChange = (four.relay / four.ingress) / (two.relay / two.ingress) - 1
            let egressRatio = (four.egress / four.ingress) / (two.egress / two.ingress)
            #expect(abs(relayChange) < 0.03, "relay bytes per ingress byte changed \(relayChange * 100) %: \(two) \(four)")
            #expect(egressRatio > 1.7 && egressRatio < 2.3, "egress grew \(egressRatio)x: \(two) \(four)")

            // Two subscribers capped at the lowest layer (`--layout 5x5`:
            // 256 pixels wide): X is full, so they go to the other node,
            // whose relay then carries that layer and the audio only, which
            // is what one of its subscribers receives (the relay's framing
            // and the egress's SRTP tags and extensions differ by a few
            // percent). One-second windows from their first media until one
            // shows it: the issue asks for 2 s.
            let other = far == "node-b" ? "node-c" : "node-b"
            let third = try roombot(["--publishers", "0", "--subscribers", "2", "--layout", "5x5"])
            #expect(third.wait(for: " 4 flowing", seconds: 20), "\(third.output)")
            let flowing = Date()
            #expect(Cascade.holders(redis, "demand", holding: "-subscriber-") == [far, other])
            var perSubscriber = Double.infinity
            var narrowedAfter: Double?
            while narrowedAfter == nil, Date().timeIntervalSince(flowing) < 12 {
                let w = try window(nodes, far: other, seconds: 1)
                perSubscriber = w.relay / max(w.egress / 2, 1)
                if perSubscriber < 1.4 { narrowedAfter = Date().timeIntervalSince(flowing) }
            }
            let capped = try window(nodes, far: other, seconds: 3)
            let cappedPerSubscriber = capped.relay / max(capped.egress / 2, 1)
            let full = four.relay / four.ingress
            let cappedShare = capped.relay / capped.ingress
            let diagnosis = {
                let home = (try? serverMetrics(a.url)) ?? [:]
                let there = (try? serverMetrics(nodes[other]!.url)) ?? [:]
                let relevant = { (m: [String: Double]) in
                    m.filter { k, _ in k.contains("relay") || k.contains("unknown_relay") || k.contains("layer") }
                        .sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "\n")
                }
                // The far node's rooms log (debug with --dev): what its
                // subscribers asked and the media commands that followed.
                let log = nodes[other]!.output.text.split(separator: "\n").filter {
                    $0.contains("media:") || $0.contains("preference") || $0.contains("error")
                }
                return "home:\n\(relevant(home))\n\(other):\n\(relevant(there))\n\(other)'s log:\n"
                    + log.suffix(80).joined(separator: "\n")
            }
            #expect(narrowedAfter.map { $0 <= 3 } == true, "relay \(perSubscriber)x a capped subscriber's bytes\n\(diagnosis())")
            #expect(cappedPerSubscriber < 1.4, "relay \(cappedPerSubscriber)x a capped subscriber's bytes\n\(diagnosis())")
            #expect(cappedShare < full * 0.35, "capped relay \(cappedShare) of the ingress against \(full) uncapped")
            print(
                "cascade relay: \(far) with 2 subscribers \(Int(two.relay * 8 / 1000)) kbit/s relayed, "
                    + "with 4 \(Int(four.relay * 8 / 1000)) kbit/s (\(String(format: "%+.1f", relayChange * 100)) % per ingress byte), "
                    + "egress x\(String(format: "%.2f", egressRatio)); \(other) capped: narrowed within "
                    + "\(String(format: "%.1f", narrowedAfter ?? -1)) s of its first media, then "
                    + "\(Int(capped.relay * 8 / 1000)) kbit/s, \(String(format: "%.2f", cappedPerSubscriber))x a capped subscriber's "
                    + "egress, \(String(format: "%.1f", cappedShare * 100)) % of the ingress against \(String(format: "%.1f", full * 100)) %"
            )
        }
    }
}
