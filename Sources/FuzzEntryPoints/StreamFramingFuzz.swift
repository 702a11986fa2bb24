import Wire

extension FuzzEntryPoints {
    /// Feeds arbitrary bytes to an RFC 4571 decoder (ICE-TCP's framing) in
    /// chunks whose sizes come from the input itself, and checks against a
    /// one-shot reference walk that the frames, and the errors, are the same
    /// whatever the split: each frame in bounds and of the announced length,
    /// no byte delivered twice, a too-long frame skipped without losing step.
    public static func streamFraming(_ data: UnsafeRawBufferPointer) {
        guard data.count >= 2 else { return }
        let maxFrame = 1 + Int(data[0]) * 8  // 1...2041
        let split = Int(data[1])
        let stream = Array(data[2...])

        // Reference: walk the prefixes once over the whole stream.
        var expected: [Result<[UInt8], StreamFramingError>] = []
        var i = 0
        while i + 2 <= stream.count {
            let length = Int(stream[i]) << 8 | Int(stream[i + 1])
            i += 2
            if length == 0 {
                expected.append(.failure(.emptyFrame))
            } else if length > maxFrame {
                expected.append(.failure(.frameTooLong(length: length)))
                i += length
            } else if i + length <= stream.count {
                expected.append(.success(Array(stream[i..<(i + length)])))
                i += length
            } else {
                break
            }
        }

        var decoder = StreamFrameDecoder(maxFrameLength: maxFrame)
        var seen: [Result<[UInt8], StreamFramingError>] = []
        var copy = stream
        copy.withUnsafeMutableBytes { all in
            var offset = 0
            var step = 0
            while offset < all.count {
                // Chunk sizes 1...split+1, varying with the position.
                let size = min(all.count - offset, 1 + (split == 0 ? all.count : (offset * 7 + step) % (split + 1)))
                step += 1
                var input = UnsafeMutableRawBufferPointer(rebasing: all[offset..<(offset + size)])
                offset += size
                while true {
                    do throws(StreamFramingError) {
                        guard let frame = try decoder.nextFrame(from: &input) else { break }
                        precondition(frame.count >= 1 && frame.count <= maxFrame)
                        seen.append(.success(Array(frame)))
                    } catch {
                        seen.append(.failure(error))
                    }
                }
                precondition(input.isEmpty)
            }
        }
        precondition(seen == expected, "split decoding differs from the whole-stream walk")
        precondition(decoder.bufferedBytes <= maxFrame + StreamFraming.headerLength)
    }
}
