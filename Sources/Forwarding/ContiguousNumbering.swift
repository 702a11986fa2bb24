/// Maps one source's extended numbers onto an outgoing counter that has no
/// gaps where the forwarder dropped something: the core of sequence number
/// (and VP8 picture ID) continuity.
///
/// `out = in + offset`, and each drop of a number above the highest seen
/// lowers the offset by one, so the next forwarded number takes the
/// dropped one's place. A late number (below the highest) maps to what it
/// would have had in order: `in + offset + drops between it and the
/// highest`, counted in a window of the last 256 numbers. A late number
/// that is then dropped leaves a hole: the numbers after it were already
/// handed out, and reusing them would collide.
struct ContiguousNumbering: Sendable {
    enum Placement: Equatable {
        /// Above the highest so far.
        case ahead
        /// The highest itself.
        case highest
        /// Below the highest, inside the window.
        case late
        /// Below the first number of this source (older than the switch).
        case beforeStart
        /// Below the window: cannot be mapped consistently any more.
        case tooOld
    }

    /// First number of this source: the switch point.
    let start: UInt64
    private(set) var highest: UInt64
    private var offset: UInt64
    /// Numbers seen (forwarded or dropped) in the window.
    private var seen = RecentNumberWindow()
    /// Numbers dropped while they were the highest: they took no number.
    private var dropped = RecentNumberWindow()

    /// Starts with `first` forwarded as `outgoing`.
    init(first: UInt64, outgoing: UInt64) {
        start = first
        highest = first
        offset = outgoing &- first
        seen.insert(first)
    }

    func place(_ n: UInt64) -> Placement {
        if n > highest { return .ahead }
        if n == highest { return .highest }
        if highest - n >= RecentNumberWindow.capacity { return .tooOld }
        if n < start { return .beforeStart }
        return .late
    }

    func wasSeen(_ n: UInt64) -> Bool { n == highest || seen.contains(n) }

    /// The outgoing number of `n` (at most the highest). Drops are counted
    /// only inside the window; below it the mapping is approximate, which
    /// callers avoid by checking `place` first.
    func outgoing(_ n: UInt64) -> UInt64 {
        let lowest = highest >= RecentNumberWindow.capacity ? highest - RecentNumberWindow.capacity + 1 : 0
        return n &+ offset &+ dropped.count(from: max(n &+ 1, lowest), through: highest)
    }

    /// Moves the highest to `n` (which must be `.ahead`) and maps it.
    mutating func forwardAhead(_ n: UInt64) -> UInt64 {
        advance(to: n)
        return n &+ offset
    }

    /// Moves the highest to `n` (which must be `.ahead`), taking no number.
    mutating func dropAhead(_ n: UInt64) {
        advance(to: n)
        dropped.insert(n)
        offset &-= 1
    }

    /// Marks a late number as seen (forwarded or dropped).
    mutating func markSeen(_ n: UInt64) { seen.insert(n) }

    private mutating func advance(to n: UInt64) {
        seen.clear(from: highest + 1, through: n)
        dropped.clear(from: highest + 1, through: n)
        highest = n
        seen.insert(n)
    }
}
