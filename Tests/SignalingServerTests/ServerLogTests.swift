import SignalingServer
import Synchronization
import Testing

@Suite struct ServerLogTests {
    @Test func writesLinesAtOrAboveItsLevelWithTimestampAndLevel() {
        let lines = Mutex<[String]>([])
        let log = ServerLog(minimum: .info) { line in lines.withLock { $0.append(line) } }
        log(.debug, "hidden")
        log(.info, "c1: joined sfu room 'r'")
        log(.error, "boom")
        let written = lines.withLock { $0 }
        #expect(written.count == 2)
        #expect(written[0].hasSuffix(" info c1: joined sfu room 'r'\n"))
        #expect(written[1].hasSuffix(" error boom\n"))
        // 2026-11-30T01:02:03.456Z-style UTC timestamp first.
        #expect(written[0].prefix(4).allSatisfy { $0.isNumber })
        #expect(written[0].split(separator: " ").first?.hasSuffix("Z") == true)
    }

    @Test func offWritesNothingAndDebugWritesEverything() {
        let lines = Mutex<[String]>([])
        ServerLog.off(.error, "nothing")
        let debug = ServerLog(minimum: .debug) { line in lines.withLock { $0.append(line) } }
        debug(.debug, "a")
        debug(.warning, "b")
        #expect(lines.withLock { $0.count } == 2)
    }
}
