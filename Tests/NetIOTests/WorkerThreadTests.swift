import Foundation
import NetIO
import Synchronization
import Testing

/// Thread names are what a benchmark reads from /proc/PID/task/TID/comm to
/// tell the media workers apart (Scripts/bench-core).
@Suite struct WorkerThreadTests {
    /// The name the running thread has, read by the thread itself.
    private func nameSeenInside(_ name: String?) -> String {
        let seen = Mutex("")
        let thread = WorkerThread(name: name) {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "unreadable"
            seen.withLock { $0 = comm.trimmingCharacters(in: .newlines) }
        }
        thread.join()
        return seen.withLock { $0 }
    }

    @Test func namedThreadShowsItsNameInProc() {
        #expect(nameSeenInside("media-3") == "media-3")
    }

    @Test func nameLongerThanTheKernelKeepsIsCutTo15Bytes() {
        // TASK_COMM_LEN is 16 with the NUL; pthread_setname_np refuses
        // longer names (ERANGE), so the shim cuts them rather than leave
        // the thread with the process's name.
        #expect(nameSeenInside("media-events-and-more") == "media-events-an")
    }

    @Test func unnamedThreadKeepsItsCreatorsName() {
        // A new thread inherits the comm of the thread that created it
        // (here a Swift concurrency thread's), as before names existed.
        let creator = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
            .trimmingCharacters(in: .newlines)
        #expect(nameSeenInside(nil) == creator)
    }
}
