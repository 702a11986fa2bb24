/// RFC 4571 section 2 framing: RTP, RTCP, STUN and DTLS packets carried on
/// a TCP connection, each preceded by its length as a 16-bit big-endian
/// integer (`LENGTH`, 0...65535). ICE over TCP (RFC 6544 section 3) uses it
/// for every packet of the connection.
package enum StreamFraming {
    /// Bytes of the length prefix.
    package static let headerLength = 2

    /// Writes the prefix of a `length`-byte frame into `header[0..<2]`.
    /// False (nothing written) when the length does not fit 16 bits or the
    /// buffer is shorter than the prefix.
    @discardableResult
    package static func writeHeader(length: Int, into header: UnsafeMutableRawBufferPointer) -> Bool {
        guard (0...Int(UInt16.max)).contains(length), header.count >= headerLength else { return false }
        header[0] = UInt8(truncatingIfNeeded: length >> 8)
        header[1] = UInt8(truncatingIfNeeded: length)
        return true
    }
}

/// Why a frame was not delivered. Each costs only the frame it names: the
/// decoder skips that frame's bytes and stays in step with the stream.
package enum StreamFramingError: Error, Equatable, Sendable {
    /// The prefix announced more than the decoder's `maxFrameLength`
    /// (ours, not RFC 4571's 65535): the frame is skipped unread.
    case frameTooLong(length: Int)
    /// A zero-length frame: RFC 4571 allows it, but no packet of ICE-TCP
    /// is empty, so there is nothing to deliver.
    case emptyFrame
}

/// Splits a TCP byte stream into RFC 4571 frames, whatever the boundaries
/// of the reads: a frame may arrive a byte at a time, or many frames in one
/// read. Sans-IO and allocation-free after `init`: a frame that arrives
/// whole within one input is handed out in place (the caller's buffer, so
/// it may be decrypted there); one split across inputs is gathered in the
/// decoder's own buffer of `maxFrameLength` bytes, allocated once.
///
/// Drive it with each read's bytes: call `nextFrame(from:)` until it
/// returns nil (the input is used up); a thrown error drops one frame and
/// the next call goes on after it.
package struct StreamFrameDecoder: ~Copyable {
    package let maxFrameLength: Int
    private let storage: UnsafeMutableRawBufferPointer
    /// Prefix bytes gathered so far (0...2) and their value.
    private var headerBytes = 0
    private var pendingLength = 0
    /// Body bytes gathered into `storage`, or still to skip.
    private var gathered = 0
    private var skipping = 0

    /// `maxFrameLength` is clamped to 1...65535.
    package init(maxFrameLength: Int) {
        self.maxFrameLength = min(max(maxFrameLength, 1), Int(UInt16.max))
        storage = .allocate(byteCount: self.maxFrameLength, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Bytes held between inputs (a partial prefix or frame).
    package var bufferedBytes: Int { headerBytes + gathered }

    /// The next whole frame of `input`, consuming what it reads from the
    /// front of `input`; nil once `input` is empty with no frame complete
    /// (the partial one is kept for the next input). The returned buffer is
    /// valid until the next call or until `input`'s memory is reused.
    package mutating func nextFrame(
        from input: inout UnsafeMutableRawBufferPointer
    ) throws(StreamFramingError) -> UnsafeMutableRawBufferPointer? {
        while !input.isEmpty {
            if skipping > 0 {
                let n = min(skipping, input.count)
                skipping -= n
                input = UnsafeMutableRawBufferPointer(rebasing: input[n...])
                continue
            }
            if headerBytes < StreamFraming.headerLength {
                pendingLength = pendingLength << 8 | Int(input[0])
                headerBytes += 1
                input = UnsafeMutableRawBufferPointer(rebasing: input[1...])
                guard headerBytes == StreamFraming.headerLength else { continue }
                let length = pendingLength
                if length == 0 {
                    reset()
                    throw .emptyFrame
                }
                if length > maxFrameLength {
                    reset()
                    skipping = length
                    throw .frameTooLong(length: length)
                }
                continue
            }
            let missing = pendingLength - gathered
            if gathered == 0, input.count >= missing {
                // The whole body is in this input: hand it out in place.
                let frame = UnsafeMutableRawBufferPointer(rebasing: input[0..<missing])
                input = UnsafeMutableRawBufferPointer(rebasing: input[missing...])
                reset()
                return frame
            }
            let n = min(missing, input.count)
            UnsafeMutableRawBufferPointer(rebasing: storage[gathered..<(gathered + n)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: input[0..<n]))
            gathered += n
            input = UnsafeMutableRawBufferPointer(rebasing: input[n...])
            if gathered == pendingLength {
                let frame = UnsafeMutableRawBufferPointer(rebasing: storage[0..<pendingLength])
                reset()
                return frame
            }
        }
        return nil
    }

    private mutating func reset() {
        headerBytes = 0
        pendingLength = 0
        gathered = 0
    }
}
