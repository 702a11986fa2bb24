import Foundation
import RedisTesting
import Testing

extension ClusterProcessSuite {
    /// `swiftlet serve --redis` (issue #15): two nodes on one real Redis see
    /// each other through their records; one killed with SIGKILL is gone for
    /// the other once its record expires (6 s), read from Redis, not told.
    @Suite struct ServeClusterProcessTests {
        func metric(_ name: String, of wsURL: String) -> Double? {
            (try? serverMetrics(wsURL))?[name]
        }

        func wait(_ seconds: Double, until done: () -> Bool) -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while !done(), Date() < end { usleep(100_000) }
            return done()
        }

        @Test(.timeLimit(.minutes(1)))
        func twoNodesSeeEachOtherAndADeadOneExpires() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let (a, _, urlA) = try startDevServer(["--redis", "unix:\(redis.socketPath)", "--node-name", "node-a"])
            defer {
                a.terminate()
                a.waitUntilExit()
            }
            let (b, outputB, urlB) = try startDevServer(["--redis", "unix:\(redis.socketPath)", "--node-name", "node-b"])
            defer { if b.isRunning { kill(b.processIdentifier, SIGKILL) } }
            #expect(outputB.text.contains("cluster          node node-b~"))
            #expect(
                wait(10) { metric("swiftlet_cluster_nodes", of: urlA) == 2 && metric("swiftlet_cluster_nodes", of: urlB) == 2 })
            #expect(metric("swiftlet_cluster_connected", of: urlA) == 1)

            kill(b.processIdentifier, SIGKILL)
            b.waitUntilExit()
            // b's record lives 6 s from its last refresh; a reads every 2 s.
            #expect(wait(12) { metric("swiftlet_cluster_nodes", of: urlA) == 1 })
        }

        @Test func aRedisURLThatIsNotOneIsRefusedAtStart() throws {
            let process = Process()
            process.executableURL = builtProduct("swiftlet")
            process.arguments = ["serve", "--dev", "--redis", "http://localhost"]
            let output = OutputReader()
            process.standardOutput = output.pipe
            process.standardError = output.pipe
            try process.run()
            #expect(output.waitForExit(process, seconds: 20))
            #expect(process.terminationStatus == 64)
            #expect(output.text.contains("--redis"))
        }
    }
}
