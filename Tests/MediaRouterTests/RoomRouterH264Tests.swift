import MediaRouter
import Negotiation
import RTP
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire

/// H.264 simulcast through one router on a virtual clock: layer
/// sizes come from each layer's SPS, so a `maxWidth` preference picks the
/// layer that fits, and a subscriber enters a layer at the SPS and PPS
/// ahead of its IDR.
@Suite struct RoomRouterH264Tests {
    static let h264 = PayloadType(rawValue: 108)!
    static let h264RTX = PayloadType(rawValue: 109)!

    /// SPS units of Chromium 156's OpenH264 encoder at its three layers'
    /// sizes (as in CodecsTests' H264PictureSizeTests).
    static let sps: [[UInt8]] = [
        [0x67, 0x42, 0xC0, 0x15, 0x8C, 0x8D, 0x40, 0xA0, 0xCB, 0xCF, 0x35, 0x06, 0x06, 0x06, 0x07, 0x84, 0x42, 0x35, 0x00],
        [0x67, 0x42, 0xC0, 0x1F, 0x8C, 0x8D, 0x40, 0x50, 0x17, 0xFC, 0xB3, 0x50, 0x60, 0x60, 0x60, 0x78, 0x44, 0x23, 0x50],
        [0x67, 0x42, 0xC0, 0x20, 0x8C, 0x8D, 0x40, 0x28, 0x02, 0xDD, 0x35, 0x06, 0x06, 0x06, 0x07, 0x84, 0x42, 0x35, 0x00],
    ]
    static let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]

    /// The packets of one picture of a layer, each ending in the layer tag
    /// and the picture index: a keyframe as libwebrtc sends one larger
    /// than a packet (STAP-A of SPS and PPS, then the IDR in two FU-A
    /// fragments, one timestamp), or one non-IDR slice.
    static func picture(layer: Int, keyframe: Bool, tag: UInt8, n: Int) -> [[UInt8]] {
        guard keyframe else { return [[0x41, 0x9A, tag, UInt8(n)]] }
        var stap: [UInt8] = [0x78]
        // The tag ends the PPS unit, so the STAP-A's sizes stay whole.
        for unit in [sps[layer], pps + [tag, UInt8(n)]] {
            stap += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit
        }
        return [stap, [0x7C, 0x85, 0xB8, tag, UInt8(n)], [0x7C, 0x45, 0x11, tag, UInt8(n)]]
    }

    static func track(rids: [RID]) -> PublishedTrackDescription {
        var extensions = HeaderExtensionIDs()
        extensions.mid = 4
        extensions.rtpStreamID = 10
        return PublishedTrackDescription(
            mid: "1", kind: .video, direction: .sendonly, msid: nil,
            codecs: [.h264(payloadType: h264, rtxPayloadType: h264RTX)], simulcast: rids.map { SimulcastLayer(rid: $0) },
            sources: nil, headerExtensions: extensions, reducedSizeRTCP: true)
    }

    @Test func h264LayersAreSizedByTheirSPSAndEnteredAtTheirParameterSets() throws {
        let bed = try RouterTestbed(workers: 1)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r1", worker: 0)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v", description: Self.track(rids: ["q", "h", "f"])),
            on: 0)
        let subscriber = try bed.addPeer("PA_sub", role: .subscriber, room: "r1", worker: 0)
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_sub"),
                outgoing: TestTrack.outgoing(
                    .h264(payloadType: Self.h264, rtxPayloadType: Self.h264RTX), kind: .video, ssrc: 0x7700, trackID: "TR_v")),
            on: 0)
        // A 700-pixel tile: 640 fits, 1280 does not.
        bed.execute(
            .setPreference(
                room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_sub"), preference: ReceivePreference(maxWidth: 700)),
            on: 0)
        #expect(bed.connect())

        let layers: [(rid: String, ssrc: UInt32, tag: UInt8)] = [("q", 0x100, 0x01), ("h", 0x200, 0x02), ("f", 0x300, 0x03)]
        var sequence: [UInt16] = [0x100, 0x200, 0x300]
        // 20 pictures a second per layer for 1.6 s; every layer starts on
        // a keyframe and sends another every 0.4 s. The first ones tell
        // the worker each layer's size, and the allocator (every 200 ms)
        // then picks the widest layer that fits: h, entered at its next
        // keyframe.
        for n in 0..<32 {
            for (index, layer) in layers.enumerated() {
                for payload in Self.picture(layer: index, keyframe: n % 8 == 0, tag: layer.tag, n: n) {
                    let extensions: [(UInt8, [UInt8])] = [(4, Array("1".utf8)), (10, Array(layer.rid.utf8))]
                    bed.send(
                        RTPBuilders.packet(
                            payloadType: 108, sequenceNumber: sequence[index], timestamp: UInt32(4500 * n),
                            ssrc: layer.ssrc, extensions: extensions, payload: payload), from: publisher)
                    sequence[index] &+= 1
                }
            }
            bed.run(for: .milliseconds(50))
        }
        bed.run(for: .milliseconds(100))

        let headers = subscriber.rtpHeaders
        #expect(headers.count == subscriber.rtp.count)
        #expect(headers.allSatisfy { $0.ssrc == SSRC(0x7700) && $0.payloadType == Self.h264 })
        let payloads = subscriber.rtp.map { Array($0[(try? RTPHeader(parsing: $0.span.bytes))?.payloadRange ?? 0..<0]) }
        let tags = payloads.map { $0[$0.count - 2] }
        // It starts on f (no size known yet), and once on h never leaves
        // it: q and f do not fit 700, h is 640 wide by its SPS.
        #expect(tags.first == 0x03, "\(tags)")
        let firstH = try #require(tags.firstIndex(of: 0x02), "\(tags)")
        #expect(tags[firstH...].allSatisfy { $0 == 0x02 }, "\(tags)")
        #expect(!tags.contains(0x01))
        // h is entered at its second keyframe (picture 8, 0.4 s): the first
        // allocation round after the sizes are known.
        #expect(payloads[firstH].last == 8, "\(payloads[firstH])")
        // And h begins at its parameter sets, not at the IDR slice after
        // them: a decoder needs h's SPS and PPS for h's IDR.
        let first = payloads[firstH]
        #expect(first[0] & 0x1F == 24, "\(first)")
        #expect(first[3] & 0x1F == 7, "\(first)")
    }
}
