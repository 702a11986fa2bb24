import FuzzEntryPoints

/// libFuzzer entry: every input goes through the same function that the
/// corpus replay test in FuzzEntryPointsTests uses.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzEntryPoints.dataChannelMessage(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
