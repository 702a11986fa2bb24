import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// The real clock, read only at the edge. Protocol code receives the
/// `Instant` this returns as a parameter.
package enum MonotonicClock {
    package static func now() -> Instant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Instant(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }
}
