import Foundation

/// Writes log lines to a file descriptor from a thread of its own, so that a
/// reader that stops draining (a full stderr pipe under a supervisor that
/// hung, a terminal scrolled back) costs log lines, never a stalled
/// signalling loop: `write` only appends to a bounded queue.
///
/// Over `capacityBytes` queued, a line is dropped and counted; the next line
/// that fits is preceded by one `N log lines dropped` line, so a reader sees
/// that lines are missing and how many. `flush(timeout:)` waits (bounded)
/// until everything queued is written: call it before the process exits.
package final class LogWriter: @unchecked Sendable {
    /// Standard error, 1 MiB of queue: about 5,000 lines of 200 bytes.
    package static let standardError = LogWriter(fileDescriptor: 2, capacityBytes: 1 << 20)

    private let fileDescriptor: Int32
    private let capacityBytes: Int
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [String] = []
    private var queuedBytes = 0
    private var dropped = 0
    private var writing = false

    package init(fileDescriptor: Int32, capacityBytes: Int) {
        self.fileDescriptor = fileDescriptor
        self.capacityBytes = max(capacityBytes, 1)
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "swiftlet-log"
        thread.start()
    }

    /// Lines dropped so far because the queue was full.
    package var droppedLines: Int { condition.withLock { dropped } }

    /// Queues `line` (with its newline), or drops it when the queue is full.
    package func write(_ line: String) {
        condition.withLock {
            let size = line.utf8.count
            guard queuedBytes + size <= capacityBytes else {
                dropped += 1
                return
            }
            if dropped > 0 {
                let notice = "\(dropped) log lines dropped (the log's reader was not keeping up)\n"
                queue.append(notice)
                queuedBytes += notice.utf8.count
                dropped = 0
            }
            queue.append(line)
            queuedBytes += size
            condition.signal()
        }
    }

    /// Waits until every queued line is written, at most `timeout`; false
    /// if lines were still waiting (the reader is not draining).
    @discardableResult
    package func flush(timeout: Duration) -> Bool {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) * 1e-18
        let deadline = Date().addingTimeInterval(seconds)
        return condition.withLock {
            while !queue.isEmpty || writing {
                if !condition.wait(until: deadline) { return queue.isEmpty && !writing }
            }
            return true
        }
    }

    private func run() {
        while true {
            let batch: [String] = condition.withLock {
                while queue.isEmpty { condition.wait() }
                let batch = queue
                queue.removeAll(keepingCapacity: true)
                writing = true
                return batch
            }
            var text = batch.joined()
            let written = text.utf8.count
            text.withUTF8 { bytes in writeFully(bytes) }
            condition.withLock {
                queuedBytes -= written
                writing = false
                condition.broadcast()
            }
        }
    }

    /// Every byte, across partial writes and EINTR; a descriptor that fails
    /// otherwise (closed, EPIPE) loses the batch: there is nowhere to say so.
    private func writeFully(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard var cursor = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let n = Foundation.write(fileDescriptor, cursor, left)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            cursor += n
            left -= n
        }
    }
}
