import Wire

@testable import RTP

// `#expect` cannot take a `RawSpan` argument (it is ~Escapable), so tests
// call these array-taking forwarders instead.
extension RTPHeader {
    func csrc(at index: Int, in packet: [UInt8]) -> SSRC? { csrc(at: index, in: packet.span.bytes) }
    func extensionValueRange(id: UInt8, in packet: [UInt8]) -> Range<Int>? {
        extensionValueRange(id: id, in: packet.span.bytes)
    }
    func mid(id: UInt8, in packet: [UInt8]) -> MID? { mid(id: id, in: packet.span.bytes) }
    func rid(id: UInt8, in packet: [UInt8]) -> RID? { rid(id: id, in: packet.span.bytes) }
    func extensionValueBytes(id: UInt8, in packet: [UInt8]) -> [UInt8]? {
        extensionValue(id: id, in: packet.span.bytes)?.copiedBytes()
    }
    static func isRTCP(_ packet: [UInt8]) -> Bool { isRTCP(packet.span.bytes) }
}
