import CAVFormat

/// A WebM file (Matroska with VP8 and Opus) written by FFmpeg's
/// libavformat; frames are copied in as the sender encoded them, never
/// transcoded. The one owner of its `AVFormatContext`: `~Copyable`, and
/// `deinit` closes what `finish` did not (the trailer unwritten: see
/// docs/RECORDING.md, "What a crash loses").
///
/// Clusters are closed at most every `clusterMilliseconds` of media
/// (`cluster_time_limit`), and `flush` pushes the closed ones to the file
/// (an empty `av_write_frame` then `avio_flush`), so a process killed
/// with SIGKILL leaves every cluster before the last flush readable; what
/// only `finish` writes is the trailer: the Cues (seeking index), the
/// Duration and the Segment's size.
struct WebMFileWriter: ~Copyable {
    struct Failure: Error, CustomStringConvertible {
        var operation: String
        var code: Int32
        var description: String {
            var buffer = [CChar](repeating: 0, count: 128)
            av_strerror(code, &buffer, buffer.count)
            let message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            return "\(operation): \(message) (\(code))"
        }
    }

    let path: String
    private let context: UnsafeMutablePointer<AVFormatContext>
    private let packet: UnsafeMutablePointer<AVPacket>
    private var finished = false

    static let clusterMilliseconds = 1000

    /// Creates `path` and writes the header: audio is stream 0 when there
    /// is audio, then video. `video`: the first keyframe's
    /// size (RFC 6386 section 9.1), for the track's PixelWidth and
    /// PixelHeight.
    init(path: String, video: (width: Int32, height: Int32)?, audio: Bool) throws(Failure) {
        self.path = path
        var made: UnsafeMutablePointer<AVFormatContext>?
        var rc = avformat_alloc_output_context2(&made, nil, "webm", path)
        guard rc >= 0, let context = made else { throw Failure(operation: "webm muxer", code: rc) }
        guard let packet = av_packet_alloc() else {
            avformat_free_context(context)
            throw Failure(operation: "packet", code: -12)
        }
        if audio {
            let stream = avformat_new_stream(context, nil)!
            stream.pointee.time_base = AVRational(num: 1, den: 1000)
            let p = stream.pointee.codecpar!
            p.pointee.codec_type = AVMEDIA_TYPE_AUDIO
            p.pointee.codec_id = AV_CODEC_ID_OPUS
            p.pointee.sample_rate = 48_000
            av_channel_layout_default(&p.pointee.ch_layout, 2)
            // Matroska's Opus CodecPrivate is the Ogg identification header
            // (RFC 7845 section 5.1): "OpusHead", version 1, 2 channels
            // (RFC 7587 section 7 signals opus/48000/2), no pre-skip (the
            // stream began long before the recording), 48 kHz, 0 gain,
            // mapping family 0.
            let head: [UInt8] = [
                0x4F, 0x70, 0x75, 0x73, 0x48, 0x65, 0x61, 0x64, 1, 2, 0, 0, 0x80, 0xBB, 0, 0, 0, 0, 0,
            ]
            let extra = av_mallocz(head.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))!
            head.withUnsafeBytes { extra.copyMemory(from: $0.baseAddress!, byteCount: head.count) }
            p.pointee.extradata = extra.assumingMemoryBound(to: UInt8.self)
            p.pointee.extradata_size = Int32(head.count)
        }
        if let video {
            let stream = avformat_new_stream(context, nil)!
            stream.pointee.time_base = AVRational(num: 1, den: 1000)
            let p = stream.pointee.codecpar!
            p.pointee.codec_type = AVMEDIA_TYPE_VIDEO
            p.pointee.codec_id = AV_CODEC_ID_VP8
            p.pointee.width = video.width
            p.pointee.height = video.height
        }
        rc = avio_open(&context.pointee.pb, path, AVIO_FLAG_WRITE)
        guard rc >= 0 else {
            av_packet_free_one(packet)
            avformat_free_context(context)
            throw Failure(operation: "open \(path)", code: rc)
        }
        // Interleave across streams within 1 s (the default waits up to 10
        // s for a silent stream, holding everything else back).
        context.pointee.max_interleave_delta = 1_000_000
        var options: OpaquePointer?
        av_dict_set(&options, "cluster_time_limit", "\(Self.clusterMilliseconds)", 0)
        rc = avformat_write_header(context, &options)
        av_dict_free(&options)
        guard rc >= 0 else {
            avio_closep(&context.pointee.pb)
            av_packet_free_one(packet)
            avformat_free_context(context)
            throw Failure(operation: "header", code: rc)
        }
        self.context = context
        self.packet = packet
    }

    /// One frame at `milliseconds` on the file's clock.
    mutating func write(
        stream: Int32, milliseconds: Int64, duration: Int64, isKeyframe: Bool, bytes: [UInt8]
    ) throws(Failure) {
        var rc = av_new_packet(packet, Int32(bytes.count))
        guard rc >= 0 else { throw Failure(operation: "packet", code: rc) }
        bytes.withUnsafeBytes { packet.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: bytes.count) }
        let base = context.pointee.streams[Int(stream)]!.pointee.time_base
        let ms = AVRational(num: 1, den: 1000)
        packet.pointee.pts = av_rescale_q(milliseconds, ms, base)
        packet.pointee.dts = packet.pointee.pts
        packet.pointee.duration = av_rescale_q(duration, ms, base)
        packet.pointee.stream_index = stream
        packet.pointee.flags = isKeyframe ? AV_PKT_FLAG_KEY : 0
        // Takes the packet's data and leaves it blank for the next one.
        rc = av_interleaved_write_frame(context, packet)
        guard rc >= 0 else { throw Failure(operation: "write", code: rc) }
    }

    /// Closes the open cluster and pushes everything written to the file;
    /// returns the bytes written so far.
    @discardableResult
    mutating func flush() -> Int64 {
        av_write_frame(context, nil)
        avio_flush(context.pointee.pb)
        return avio_tell(context.pointee.pb)
    }

    /// Writes the trailer (Cues, Duration, sizes) and closes the file;
    /// returns its size in bytes.
    mutating func finish() throws(Failure) -> Int64 {
        finished = true
        let rc = av_write_trailer(context)
        let size = avio_size(context.pointee.pb)
        avio_closep(&context.pointee.pb)
        guard rc >= 0 else { throw Failure(operation: "trailer", code: rc) }
        return size
    }

    deinit {
        if !finished { avio_closep(&context.pointee.pb) }
        av_packet_free_one(packet)
        avformat_free_context(context)
    }
}

private func av_packet_free_one(_ packet: UnsafeMutablePointer<AVPacket>) {
    var p: UnsafeMutablePointer<AVPacket>? = packet
    av_packet_free(&p)
}
