import Foundation

/// The server's log: one line per event on standard error, with a UTC
/// timestamp and a level. `--dev` logs at `debug` (every message and media
/// command); otherwise `info` (joins, leaves, refusals, errors).
public struct ServerLog: Sendable {
    public enum Level: Int, Comparable, Sendable, CustomStringConvertible {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    public let minimum: Level?
    private let sink: @Sendable (String) -> Void

    /// A log writing lines at `minimum` and above to `sink` (standard
    /// error by default).
    public init(minimum: Level, sink: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) {
        self.minimum = minimum
        self.sink = sink
    }

    private init() {
        minimum = nil
        sink = { _ in }
    }

    /// Logs nothing (tests).
    public static let off = ServerLog()

    public func callAsFunction(_ level: Level, _ message: @autoclosure () -> String) {
        guard let minimum, level >= minimum else { return }
        let stamp = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        sink("\(stamp) \(level) \(message())\n")
    }
}
