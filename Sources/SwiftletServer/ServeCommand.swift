#if canImport(Glibc)
import Glibc
#endif

/// `swiftlet serve`. The media transport and signalling are not built yet
/// (issues 3 and 4); until then it says so rather than pretending to serve.
enum ServeCommand {
    static func run(_ arguments: [String]) -> Int32 {
        FileHandleStderr.write("swiftlet serve: the media transport and room signalling are not built yet (see docs/ROADMAP.md)\n")
        return 69
    }
}
