import RTCP
import Wire

/// Parses a whole compound from an array.
func parseCompound(_ bytes: [UInt8]) throws(RTCPParseError) -> RTCPCompoundPacket {
    try RTCPCompoundPacket.parse(bytes.span.bytes)
}

/// Parses bytes that hold exactly one packet and returns it.
func parseSingle(_ bytes: [UInt8]) throws(RTCPParseError) -> RTCPPacket {
    let compound = try parseCompound(bytes)
    guard compound.packets.count == 1 else { throw .truncated }
    // Transport-cc feedback parses unexpanded; expanded, it compares with
    // the built value.
    return compound.expandedPackets(bytes.span.bytes)[0]
}

/// Serializes one packet and parses it back.
func roundTrip(_ packet: RTCPPacket) throws(RTCPParseError) -> RTCPPacket {
    var writer = ByteWriter()
    packet.serialize(into: &writer)
    return try parseSingle(writer.bytes)
}
