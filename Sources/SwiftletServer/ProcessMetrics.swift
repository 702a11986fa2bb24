import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The standard Prometheus process metrics (`process_cpu_seconds_total`,
/// `process_resident_memory_bytes`, `process_open_fds`, `process_max_fds`,
/// `process_start_time_seconds`, as the official clients name them) and
/// `swiftlet_build_info`. Read from /proc/self on each scrape: a scrape
/// every few seconds costs a few small file reads.
enum ProcessMetrics {
    struct Sample: Equatable {
        var cpuSeconds: Double
        var residentBytes: Int
        var openFDs: Int
        var maxFDs: Int
        var startTimeSeconds: Double
    }

    static func prometheus() -> String {
        var out = """
            # HELP swiftlet_build_info The running build; the value is always 1.
            # TYPE swiftlet_build_info gauge
            swiftlet_build_info{version="\(SwiftletVersion.string)"} 1

            """
        guard let s = sample() else { return out }
        let rows: [(String, String, String, String)] = [
            ("process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds.", format(s.cpuSeconds)),
            ("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", String(s.residentBytes)),
            ("process_open_fds", "gauge", "Open file descriptors.", String(s.openFDs)),
            ("process_max_fds", "gauge", "The soft limit on open file descriptors.", String(s.maxFDs)),
            (
                "process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.",
                format(s.startTimeSeconds)
            ),
        ]
        for (name, type, help, value) in rows { out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n" }
        return out
    }

    /// Nil where /proc is missing or unreadable (the metrics are then left
    /// out rather than reported as zero).
    static func sample() -> Sample? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let fields = parseStat(stat),
            let bootTime = system.split(separator: "\n").first(where: { $0.hasPrefix("btime ") })
                .flatMap({ Double($0.dropFirst(6).trimmingCharacters(in: .whitespaces)) })
        else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = sysconf(Int32(_SC_PAGESIZE))
        var limit = rlimit()
        let maxFDs = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(limit.rlim_cur) : -1
        // Listing the directory opens one descriptor of its own.
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 1) - 1
        return Sample(
            cpuSeconds: Double(fields.utime + fields.stime) / ticks, residentBytes: fields.rssPages * page, openFDs: open,
            maxFDs: maxFDs, startTimeSeconds: bootTime + Double(fields.startTicks) / ticks)
    }

    /// The fields of /proc/self/stat we use (proc(5)): utime (14), stime
    /// (15), starttime (22) in clock ticks, rss (24) in pages. The command
    /// name (field 2) is in parentheses and may hold spaces, so fields are
    /// counted after its closing parenthesis.
    static func parseStat(_ text: String) -> (utime: Int, stime: Int, startTicks: Int, rssPages: Int)? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state).
        func field(_ n: Int) -> Int? {
            n - 3 < fields.count ? Int(fields[n - 3].trimmingCharacters(in: .whitespacesAndNewlines)) : nil
        }
        guard let utime = field(14), let stime = field(15), let start = field(22), let rss = field(24) else { return nil }
        return (utime, stime, start, rss)
    }

    private static func format(_ value: Double) -> String { String(format: "%.3f", value) }
}
