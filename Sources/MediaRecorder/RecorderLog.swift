#if canImport(Glibc)
    import Glibc
#endif

/// The recorder's own lines (a file it could not write): to stderr, off
/// the media path.
enum RecorderLog {
    static func line(_ text: String) {
        var line = "swiftlet recorder: \(text)\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
