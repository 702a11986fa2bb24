import Wire

@testable import Codecs

// Array-taking forwarders: `#expect` cannot take a ~Escapable `RawSpan`,
// and a bare literal's `.span.bytes` would be an `[Int]`'s bytes.
func vp8(_ b: [UInt8]) throws(CodecParseError) -> VP8PayloadDescriptor { try VP8PayloadDescriptor(parsing: b.span.bytes) }
func h264(_ b: [UInt8]) throws(CodecParseError) -> H264PayloadDescriptor { try H264PayloadDescriptor(parsing: b.span.bytes) }
func opus(_ b: [UInt8]) throws(CodecParseError) -> OpusTOC { try OpusTOC(parsing: b.span.bytes) }
