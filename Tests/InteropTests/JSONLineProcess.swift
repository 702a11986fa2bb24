import Foundation
import Synchronization

/// A child process spoken to in JSON, one object per line: lines go to its
/// stdin, lines come back from its stdout, and its stderr is kept for
/// failure messages. Every wait is bounded; `deinit` terminates the child.
final class JSONLineProcess {
    enum Failure: Error, CustomStringConvertible {
        case timedOut(waitingFor: String, stderr: String)
        case exited(status: Int32, waitingFor: String, stderr: String)
        case notJSON(String)

        var description: String {
            switch self {
            case .timedOut(let what, let stderr): "timed out waiting for \(what); child stderr:\n\(stderr)"
            case .exited(let status, let what, let stderr):
                "child exited (status \(status)) while we waited for \(what); child stderr:\n\(stderr)"
            case .notJSON(let line): "child wrote a line that is not a JSON object: \(line)"
            }
        }
    }

    private let process: Process
    private let stdin: FileHandle
    private let stdout = Stream()
    private let stderr = Stream()

    /// Bytes a pipe delivered so far, filled on Foundation's reading thread.
    private final class Stream: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let closed = Mutex(false)
        /// Signalled on every chunk and at end of file.
        let arrived = DispatchSemaphore(value: 0)

        func read(_ handle: FileHandle) {
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                closed.withLock { $0 = true }
            } else {
                bytes.withLock { $0.append(contentsOf: data) }
            }
            arrived.signal()
        }
    }

    init(executable: URL, arguments: [String], workingDirectory: URL) throws {
        // A write to a child that already exited must fail, not kill the
        // test runner with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = workingDirectory
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        self.process = process
        stdin = input.fileHandleForWriting

        output.fileHandleForReading.readabilityHandler = { [stdout] in stdout.read($0) }
        errors.fileHandleForReading.readabilityHandler = { [stderr] in stderr.read($0) }
        try process.run()
    }

    deinit { terminate() }

    /// What the child wrote to stderr so far, for failure messages.
    var stderrText: String { String(decoding: stderr.bytes.withLock { $0 }, as: UTF8.self) }

    var isRunning: Bool { process.isRunning }

    func terminate() {
        if process.isRunning { process.terminate() }
        try? stdin.close()
    }

    /// Writes one JSON object and a newline to the child's stdin.
    func send(_ object: [String: String]) throws {
        var data = try JSONSerialization.data(withJSONObject: object)
        data.append(0x0A)
        try stdin.write(contentsOf: data)
    }

    /// The next line the child writes to stdout, parsed as a JSON object;
    /// throws after `timeout` or when the child closes stdout first.
    func receive(_ what: String, timeout: Duration) throws -> [String: Any] {
        let (seconds, attoseconds) = timeout.components
        let deadline = DispatchTime.now() + .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        while true {
            let line: [UInt8]? = stdout.bytes.withLock { buffer in
                guard let end = buffer.firstIndex(of: 0x0A) else { return nil }
                let line = Array(buffer[..<end])
                buffer.removeSubrange(...end)
                return line
            }
            if let line {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                    throw Failure.notJSON(String(decoding: line, as: UTF8.self))
                }
                return object
            }
            if stdout.closed.withLock({ $0 }) {
                process.waitUntilExit()
                throw Failure.exited(status: process.terminationStatus, waitingFor: what, stderr: stderrText)
            }
            if stdout.arrived.wait(timeout: deadline) == .timedOut {
                throw Failure.timedOut(waitingFor: what, stderr: stderrText)
            }
        }
    }
}
