#if canImport(Glibc)
    import Glibc
#endif

enum SwiftletVersion {
    static let string = "0.1.0-dev"
}

enum FileHandleStderr {
    static func write(_ s: String) {
        var s = s
        s.withUTF8 { p in _ = Glibc.write(2, p.baseAddress, p.count) }
    }
}
