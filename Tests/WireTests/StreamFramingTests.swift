import Testing
import Wire

/// RFC 4571 section 2 framing as ICE-TCP uses it (RFC 6544 section 3).
@Suite struct StreamFramingTests {
    /// Feeds `chunks` one after another and collects frames and errors.
    static func decode(
        _ chunks: [[UInt8]], maxFrameLength: Int = 1500
    ) -> (frames: [[UInt8]], errors: [StreamFramingError], buffered: Int) {
        var decoder = StreamFrameDecoder(maxFrameLength: maxFrameLength)
        var frames: [[UInt8]] = []
        var errors: [StreamFramingError] = []
        for chunk in chunks {
            var bytes = chunk
            bytes.withUnsafeMutableBytes { all in
                var input = all
                while true {
                    do throws(StreamFramingError) {
                        guard let frame = try decoder.nextFrame(from: &input) else { break }
                        frames.append(Array(frame))
                    } catch {
                        errors.append(error)
                    }
                }
            }
        }
        return (frames, errors, decoder.bufferedBytes)
    }

    @Test func writesTheLengthBigEndian() {
        var header: [UInt8] = [0, 0]
        let ok = header.withUnsafeMutableBytes { StreamFraming.writeHeader(length: 0x0123, into: $0) }
        #expect(ok)
        #expect(header == [0x01, 0x23])
        let tooLong = header.withUnsafeMutableBytes { StreamFraming.writeHeader(length: 65536, into: $0) }
        #expect(!tooLong)
        #expect(header == [0x01, 0x23])
    }

    @Test func deliversSeveralFramesOfOneRead() {
        // LENGTH=3 "abc", LENGTH=1 "z"
        let r = Self.decode([[0x00, 0x03, 0x61, 0x62, 0x63, 0x00, 0x01, 0x7A]])
        #expect(r.frames == [[0x61, 0x62, 0x63], [0x7A]])
        #expect(r.errors.isEmpty)
        #expect(r.buffered == 0)
    }

    @Test func gathersAFrameSplitAcrossReadsEvenInsideItsPrefix() {
        let frame: [UInt8] = Array(0..<200)
        let stream: [UInt8] = [0x00, 0xC8] + frame + [0x00, 0x02, 0xAA, 0xBB]
        // One byte per read: the prefix itself is split.
        let byteByByte = Self.decode(stream.map { [$0] })
        #expect(byteByByte.frames == [frame, [0xAA, 0xBB]])
        // Irregular reads.
        let split = Self.decode([Array(stream[0..<1]), Array(stream[1..<50]), Array(stream[50..<203]), Array(stream[203...])])
        #expect(split.frames == [frame, [0xAA, 0xBB]])
        #expect(split.buffered == 0)
    }

    @Test func keepsAPartialFrameUntilItsLastByte() {
        let r = Self.decode([[0x00, 0x04, 0x01, 0x02]])
        #expect(r.frames.isEmpty)
        #expect(r.buffered == 4)
    }

    @Test func skipsAFrameLongerThanAllowedAndStaysInStep() {
        // LENGTH=1501 over a 1500 limit, then a good frame; the long one
        // arrives over two reads.
        let long = [UInt8](repeating: 0xEE, count: 1501)
        let stream: [UInt8] = [0x05, 0xDD] + long + [0x00, 0x01, 0x42]
        let r = Self.decode([Array(stream[0..<700]), Array(stream[700...])])
        #expect(r.errors == [.frameTooLong(length: 1501)])
        #expect(r.frames == [[0x42]])
    }

    @Test func reportsAnEmptyFrameAndGoesOn() {
        let r = Self.decode([[0x00, 0x00, 0x00, 0x01, 0x09]])
        #expect(r.errors == [.emptyFrame])
        #expect(r.frames == [[0x09]])
    }

    @Test func handsAWholeFrameOutInPlace() {
        var bytes: [UInt8] = [0x00, 0x02, 0x10, 0x20]
        var decoder = StreamFrameDecoder(maxFrameLength: 10)
        bytes.withUnsafeMutableBytes { all in
            var input = all
            let frame = try? decoder.nextFrame(from: &input)
            // The caller's memory, so the shell can decrypt it there.
            #expect(frame?.baseAddress == all.baseAddress! + 2)
            #expect(input.isEmpty)
        }
    }
}
