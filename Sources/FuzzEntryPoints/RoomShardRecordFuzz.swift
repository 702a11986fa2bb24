import Cluster

extension FuzzEntryPoints {
    /// Bytes read from a shard key (`RoomShardRecord`, what another node
    /// wrote) through the bounded decoder: never traps, and a record that
    /// decodes is within its bounds and writes again to bytes that read
    /// back equal (the track descriptions convert losslessly both ways).
    public static func roomShardRecord(_ data: UnsafeRawBufferPointer) {
        guard let record = RoomShardRecord(decoding: Array(data)) else { return }
        guard let bytes = record.encoded() else { preconditionFailure("a record read back cannot be written") }
        precondition(bytes.count <= RoomShardRecord.Bounds.maxEncodedBytes)
        precondition(RoomShardRecord(decoding: bytes) == record, "a record does not read back as written")
    }
}
