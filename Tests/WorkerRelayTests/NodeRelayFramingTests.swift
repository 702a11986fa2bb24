import Testing

@testable import WorkerRelay

/// `NodeRelayFraming`: relay messages as RTP and RTCP APP packets on a
/// node pair's relay transport (docs/CLUSTER.md).
@Suite struct NodeRelayFramingTests {
    let track = RelayTrackID(42)

    func encode(_ body: (UnsafeMutableRawBufferPointer) -> Int?) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0xEE, count: 1500)
        guard let n = buffer.withUnsafeMutableBytes(body) else { return nil }
        return Array(buffer[0..<n])
    }

    @Test func mediaRoundTripsWithThePublishersPacketByteForByte() throws {
        let rtp: [UInt8] = [0x90, 0x60, 0x12, 0x34] + [UInt8](repeating: 7, count: 100)
        let wire = try #require(
            encode { b in
                rtp.withUnsafeBytes {
                    NodeRelayFraming.encodeMedia(
                        track, layer: 2, isRetransmission: true, packet: $0, sequenceNumber: 0xBEEF, ssrc: 0xCAFE_F00D,
                        into: b)
                }
            })
        #expect(wire.count == NodeRelayFraming.mediaSize(packetBytes: rtp.count))
        // A plain RTP header: SRTP protects it like any stream.
        #expect(wire[0] == 0x80 && wire[1] == NodeRelayFraming.mediaPayloadType)
        #expect(wire[2] == 0xBE && wire[3] == 0xEF)
        #expect(Array(wire[8..<12]) == [0xCA, 0xFE, 0xF0, 0x0D])
        try wire.withUnsafeBytes { bytes in
            guard case .media(let t, let layer, let rtx, let packet) = try NodeRelayFraming.decodeMedia(bytes) else {
                Issue.record("not media")
                return
            }
            #expect(t == track && layer == 2 && rtx)
            #expect(Array(packet) == rtp)
        }
    }

    @Test(arguments: [
        RelayFeedback.keyframeRequest(RelayTrackID(42), layer: 1),
        .nack(RelayTrackID(42), layer: 0, packetID: 65_000, lostBitmask: 0x8001),
        .layerDemand(RelayTrackID(42), layers: 0b101),
    ])
    func feedbackRoundTripsAsOneAPPPacket(_ feedback: RelayFeedback) throws {
        let wire = try #require(encode { NodeRelayFraming.encodeFeedback(feedback, ssrc: 9, into: $0) })
        #expect(wire.count % 4 == 0)
        #expect(wire[1] == 204 && Array(wire[8..<12]) == Array("SWLT".utf8))
        let decoded = try wire.withUnsafeBytes { try NodeRelayFraming.decodeControl($0) }
        guard case .feedback(let f) = decoded else {
            Issue.record("not feedback")
            return
        }
        #expect(f == feedback)
    }

    @Test func aSenderReportRoundTrips() throws {
        let wire = try #require(
            encode {
                NodeRelayFraming.encodeSenderReport(
                    track, layer: 1, ntp: 0x0102_0304_0506_0708, rtpTimestamp: 90_000, ssrc: 9, into: $0)
            })
        let decoded = try wire.withUnsafeBytes { try NodeRelayFraming.decodeControl($0) }
        guard case .senderReport(let t, let layer, let ntp, let ts) = decoded else {
            Issue.record("not a sender report")
            return
        }
        #expect(t == track && layer == 1 && ntp == 0x0102_0304_0506_0708 && ts == 90_000)
    }

    @Test func layerBitratesRoundTrip() throws {
        let rates = RelayedLayerBitrates { s, t in Int64(100_000 * (s + 1) + t) }
        let wire = try #require(encode { NodeRelayFraming.encodeLayerBitrates(track, rates, ssrc: 9, into: $0) })
        #expect(wire.count % 4 == 0)
        let decoded = try wire.withUnsafeBytes { try NodeRelayFraming.decodeControl($0) }
        guard case .layerBitrates(let t, let got) = decoded else {
            Issue.record("not layer bitrates")
            return
        }
        #expect(t == track && got == rates)
    }

    @Test func badPacketsAreTypedErrors() throws {
        let good = try #require(encode { NodeRelayFraming.encodeFeedback(.keyframeRequest(track, layer: 0), ssrc: 9, into: $0) })
        // Another RTCP type, a wrong name, a length that is not the datagram's, nonzero padding.
        var receiverReport = good
        receiverReport[1] = 201
        var named = good
        named[8] = UInt8(ascii: "X")
        let long = good + [0, 0, 0, 0]
        var padded = try #require(
            encode { NodeRelayFraming.encodeFeedback(.layerDemand(track, layers: 1), ssrc: 9, into: $0) })
        padded[padded.count - 1] = 1
        for (bytes, error) in [
            (receiverReport, NodeRelayFraming.DecodeError.notRelayControl), (named, .notRelayControl),
            (long, .notRelayControl), (padded, .badPadding), (Array(good[0..<10]), .truncated),
        ] {
            #expect(throws: error) { try bytes.withUnsafeBytes { try NodeRelayFraming.decodeControl($0) } }
        }
        // Media: another payload type, padding bit, or too short.
        var media = try #require(
            encode { b in
                [UInt8](repeating: 1, count: 20).withUnsafeBytes {
                    NodeRelayFraming.encodeMedia(
                        track, layer: 0, isRetransmission: false, packet: $0, sequenceNumber: 1, ssrc: 1, into: b)
                }
            })
        media[1] = 96
        #expect(throws: NodeRelayFraming.DecodeError.unexpectedPayloadType(96)) {
            try media.withUnsafeBytes { try NodeRelayFraming.decodeMedia($0) }
        }
        media[1] = NodeRelayFraming.mediaPayloadType
        media[0] = 0xA0
        #expect(throws: NodeRelayFraming.DecodeError.badHeader) {
            try media.withUnsafeBytes { try NodeRelayFraming.decodeMedia($0) }
        }
        #expect(throws: NodeRelayFraming.DecodeError.truncated) {
            try [UInt8](repeating: 0x80, count: 12).withUnsafeBytes { try NodeRelayFraming.decodeMedia($0) }
        }
    }

    @Test func randomBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let count = Int.random(in: 0...64, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if count > 1, Bool.random(using: &generator) {
                bytes[0] = 0x80
                bytes[1] = Bool.random(using: &generator) ? 204 : NodeRelayFraming.mediaPayloadType
            }
            bytes.withUnsafeBytes { b in
                _ = try? NodeRelayFraming.decodeMedia(b)
                _ = try? NodeRelayFraming.decodeControl(b)
            }
        }
    }
}
