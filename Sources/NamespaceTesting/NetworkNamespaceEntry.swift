#if canImport(Glibc)
    import Glibc
#endif

/// setns(2) for network namespaces, which Swift's Glibc module leaves out
/// (with CLONE_NEWNET from <sched.h>): moves the calling thread into the
/// network namespace open as `fd`. 0 on success, -1 with `errno` set.
enum NetworkNamespaceEntry {
    static let cloneNewNet: Int32 = 0x4000_0000

    static func enter(_ fd: Int32) -> Int32 {
        typealias SetNS = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "setns") else { return -1 }
        return unsafeBitCast(symbol, to: SetNS.self)(fd, cloneNewNet)
    }
}
