import Foundation
import Testing

@testable import SignalingServer

@Suite struct LogWriterTests {
    /// A reader that never drains: the pipe (64 KiB) and the queue fill,
    /// then lines are dropped and counted, and no `write` blocks. Once the
    /// reader catches up, the count comes out before the next line.
    @Test func aStalledReaderCostsLinesNotTheCaller() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        // Fill the pipe first, so the writer's first write blocks.
        let flags = fcntl(fds[1], F_GETFL)
        _ = fcntl(fds[1], F_SETFL, flags | O_NONBLOCK)
        let filler = [UInt8](repeating: UInt8(ascii: "p"), count: 4096)
        while write(fds[1], filler, filler.count) > 0 {}
        _ = fcntl(fds[1], F_SETFL, flags)
        let writer = LogWriter(fileDescriptor: fds[1], capacityBytes: 4096)
        let line = String(repeating: "x", count: 99) + "\n"
        let start = ContinuousClock.now
        for _ in 0..<5_000 { writer.write(line) }  // 500 KB against a full pipe and 4 KiB
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(!writer.flush(timeout: .milliseconds(100)))
        #expect(writer.droppedLines > 4_900)

        // Drain the pipe on another thread, then log one more line.
        let collected = Collected()
        let readEnd = fds[0]
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(readEnd, &buffer, buffer.count)
                if n <= 0 { return }
                collected.append(buffer[0..<n])
                if collected.contains("the last line\n") { return }
            }
        }
        reader.start()
        let deadline = Date().addingTimeInterval(5)
        while !writer.flush(timeout: .milliseconds(50)), Date() < deadline {}
        writer.write("the last line\n")
        #expect(writer.flush(timeout: .seconds(5)))
        while !collected.contains("the last line\n"), Date() < deadline { usleep(10_000) }
        let text = collected.text
        let notice = try #require(text.range(of: " log lines dropped (the log's reader was not keeping up)\n"))
        #expect(notice.upperBound <= text.range(of: "the last line\n")!.lowerBound)
        #expect(writer.droppedLines == 0)
        close(fds[1])
    }

    @Test func flushWritesEverythingInOrder() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let writer = LogWriter(fileDescriptor: fds[1], capacityBytes: 1 << 16)
        for i in 0..<100 { writer.write("line \(i)\n") }
        #expect(writer.flush(timeout: .seconds(5)))
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = read(fds[0], &buffer, buffer.count)
        let expected = (0..<100).map { "line \($0)\n" }.joined()
        #expect(String(decoding: buffer[0..<max(n, 0)], as: UTF8.self) == expected)
    }
}

private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    func append(_ more: ArraySlice<UInt8>) { lock.withLock { bytes += more } }
    var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }
    func contains(_ needle: String) -> Bool { text.contains(needle) }
}
