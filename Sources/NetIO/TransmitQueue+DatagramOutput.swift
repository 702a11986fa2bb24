import Wire

/// The worker's transmit queue is where the sans-IO engines above NetIO
/// (the room router, its transport engine) write their datagrams.
extension TransmitQueue: DatagramOutput {}
