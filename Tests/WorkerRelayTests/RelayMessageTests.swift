import Testing
import WorkerRelay

/// A decoded message in a comparable form (a media packet's bytes copied).
enum DecodedRelay: Equatable {
    case media(RelayTrackID, layer: Int, isRetransmission: Bool, packet: [UInt8])
    case senderReport(RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32)
    case layerBitrates(RelayTrackID, RelayedLayerBitrates)
    case feedback(RelayFeedback)

    init(_ m: RelayMessage) {
        switch m {
        case .media(let t, let l, let r, let p): self = .media(t, layer: l, isRetransmission: r, packet: Array(p))
        case .senderReport(let t, let l, let n, let ts): self = .senderReport(t, layer: l, ntp: n, rtpTimestamp: ts)
        case .layerBitrates(let t, let r): self = .layerBitrates(t, r)
        case .feedback(let f): self = .feedback(f)
        }
    }
}

@Suite struct RelayMessageTests {
    static func decode(_ bytes: [UInt8]) -> Result<DecodedRelay, RelayMessageError> {
        bytes.withUnsafeBytes { raw in
            do throws(RelayMessageError) { return .success(DecodedRelay(try RelayMessage.decode(raw))) } catch {
                return .failure(error)
            }
        }
    }

    static func encode(_ size: Int = 64, _ body: (UnsafeMutableRawBufferPointer) -> Int?) -> [UInt8]? {
        var slot = [UInt8](repeating: 0xEE, count: size)
        guard let n = slot.withUnsafeMutableBytes(body) else { return nil }
        return Array(slot[0..<n])
    }

    @Test func mediaRoundTripsWithItsFields() throws {
        let packet: [UInt8] = [0x80, 0x60, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0xAA]
        let bytes = try #require(
            Self.encode { slot in
                packet.withUnsafeBytes {
                    RelayMessage.encodeMedia(RelayTrackID(0xDEAD_BEEF), layer: 2, isRetransmission: true, packet: $0, into: slot)
                }
            })
        // kind, flags (retransmission), layer, zero, track little-endian, packet.
        #expect(bytes == [1, 1, 2, 0, 0xEF, 0xBE, 0xAD, 0xDE] + packet)
        #expect(
            Self.decode(bytes)
                == .success(.media(RelayTrackID(0xDEAD_BEEF), layer: 2, isRetransmission: true, packet: packet)))
    }

    @Test func senderReportAndEveryFeedbackRoundTrip() throws {
        let sr = try #require(
            Self.encode {
                RelayMessage.encodeSenderReport(
                    RelayTrackID(3), layer: 1, ntp: 0x0102_0304_0506_0708, rtpTimestamp: 90_000, into: $0)
            })
        #expect(sr.count == 20)
        #expect(
            Self.decode(sr)
                == .success(.senderReport(RelayTrackID(3), layer: 1, ntp: 0x0102_0304_0506_0708, rtpTimestamp: 90_000)))
        let feedback: [RelayFeedback] = [
            .keyframeRequest(RelayTrackID(9), layer: 0), .keyframeRequest(RelayTrackID(9), layer: 7),
            .nack(RelayTrackID(10), layer: 2, packetID: 0xFFFE, lostBitmask: 0x8001),
            .layerDemand(RelayTrackID(11), layers: 0b101), .layerDemand(RelayTrackID(0), layers: 0xFF),
        ]
        for f in feedback {
            let bytes = try #require(Self.encode { RelayMessage.encodeFeedback(f, into: $0) })
            #expect(Self.decode(bytes) == .success(.feedback(f)))
        }
    }

    @Test func layerBitratesRoundTripSpatialMajorAndSaturate() throws {
        // 1 Mbit/s per temporal layer on layer 0, 9 Gbit/s (more than a
        // message holds) on layer 2's top temporal layer.
        let rates = RelayedLayerBitrates { s, t in s == 2 && t == 3 ? 9_000_000_000 : (s == 0 ? 1_000_000 : 0) }
        #expect(rates[2, 3] == UInt32.max)
        #expect(rates[0, 1] == 1_000_000 && rates[1, 0] == 0 && rates[3, 0] == 0 && rates[0, 4] == 0)
        let bytes = try #require(Self.encode { RelayMessage.encodeLayerBitrates(RelayTrackID(12), rates, into: $0) })
        #expect(bytes.count == 8 + 48)
        #expect(Array(bytes[0..<8]) == [6, 0, 0, 0, 12, 0, 0, 0])
        // Layer 0, temporal layer 1: bytes 12..<16, little-endian.
        #expect(Array(bytes[12..<16]) == [0x40, 0x42, 0x0F, 0x00])
        #expect(Self.decode(bytes) == .success(.layerBitrates(RelayTrackID(12), rates)))
        #expect(Self.encode(55) { RelayMessage.encodeLayerBitrates(RelayTrackID(12), rates, into: $0) } == nil)
        // The feedback ring's slots hold it (the sizes come from one rule).
        #expect(RelayMessage.slotSize(forPacketsUpTo: 0) >= bytes.count)
    }

    @Test func aPacketLongerThanTheSlotOrEmptyOrABadLayerIsRefused() {
        let packet = [UInt8](repeating: 7, count: 57)
        packet.withUnsafeBytes { p in
            #expect(
                Self.encode(64) {
                    RelayMessage.encodeMedia(RelayTrackID(1), layer: 0, isRetransmission: false, packet: p, into: $0)
                } == nil)
            #expect(
                Self.encode(65) {
                    RelayMessage.encodeMedia(RelayTrackID(1), layer: 0, isRetransmission: false, packet: p, into: $0)
                }?.count == 65)
            #expect(
                Self.encode { RelayMessage.encodeMedia(RelayTrackID(1), layer: 8, isRetransmission: false, packet: p, into: $0) }
                    == nil)
            #expect(
                Self.encode { RelayMessage.encodeMedia(RelayTrackID(1), layer: -1, isRetransmission: false, packet: p, into: $0) }
                    == nil)
        }
        [UInt8]().withUnsafeBytes { p in
            #expect(
                Self.encode { RelayMessage.encodeMedia(RelayTrackID(1), layer: 0, isRetransmission: false, packet: p, into: $0) }
                    == nil)
        }
        #expect(
            Self.encode(19) { RelayMessage.encodeSenderReport(RelayTrackID(1), layer: 0, ntp: 1, rtpTimestamp: 1, into: $0) }
                == nil)
        #expect(Self.encode(7) { RelayMessage.encodeFeedback(.keyframeRequest(RelayTrackID(1), layer: 0), into: $0) } == nil)
    }

    @Test func badSlotsAreTypedErrors() {
        let track: [UInt8] = [1, 0, 0, 0]
        #expect(Self.decode([]) == .failure(.truncated))
        #expect(Self.decode([1, 0, 0, 0, 1, 0, 0]) == .failure(.truncated))
        #expect(Self.decode([0, 0, 0, 0] + track + [1]) == .failure(.unknownKind(0)))
        #expect(Self.decode([7, 0, 0, 0] + track) == .failure(.unknownKind(7)))
        #expect(
            Self.decode([6, 0, 1, 0] + track + [UInt8](repeating: 0, count: 48)) == .failure(.layerOutOfRange(1)),
            "layer bitrates name no layer")
        #expect(
            Self.decode([6, 0, 0, 0] + track + [UInt8](repeating: 0, count: 47)) == .failure(.badBodyLength(kind: 6, length: 47)))
        #expect(Self.decode([1, 2, 0, 0] + track + [1]) == .failure(.badFlags), "an unknown flag")
        #expect(Self.decode([3, 1, 0, 0] + track) == .failure(.badFlags), "retransmission on feedback")
        #expect(Self.decode([1, 0, 0, 9] + track + [1]) == .failure(.badFlags), "reserved byte")
        #expect(Self.decode([1, 0, 8, 0] + track + [1]) == .failure(.layerOutOfRange(8)))
        #expect(Self.decode([5, 0, 1, 0] + track + [1]) == .failure(.layerOutOfRange(1)), "layer demand names no layer")
        #expect(Self.decode([1, 0, 0, 0] + track) == .failure(.badBodyLength(kind: 1, length: 0)), "an empty packet")
        #expect(
            Self.decode([2, 0, 0, 0] + track + [UInt8](repeating: 0, count: 11)) == .failure(.badBodyLength(kind: 2, length: 11)))
        #expect(Self.decode([3, 0, 0, 0] + track + [0]) == .failure(.badBodyLength(kind: 3, length: 1)))
        #expect(Self.decode([4, 0, 0, 0] + track + [0, 0, 0, 0, 0]) == .failure(.badBodyLength(kind: 4, length: 5)))
        #expect(Self.decode([5, 0, 0, 0] + track) == .failure(.badBodyLength(kind: 5, length: 0)))
    }

    @Test func drainSkipsAndCountsABadSlot() {
        let ring = PacketRing(capacity: 4, slotSize: 32)
        #expect(ring.push { RelayMessage.encodeFeedback(.keyframeRequest(RelayTrackID(1), layer: 0), into: $0) })
        #expect(
            ring.push { slot in
                slot[0] = 0x42; return 8
            })
        #expect(ring.push { RelayMessage.encodeFeedback(.layerDemand(RelayTrackID(2), layers: 3), into: $0) })
        var got: [DecodedRelay] = []
        let (read, malformed) = ring.drainMessages(limit: 10) { got.append(DecodedRelay($0)) }
        #expect(read == 3 && malformed == 1)
        #expect(
            got == [.feedback(.keyframeRequest(RelayTrackID(1), layer: 0)), .feedback(.layerDemand(RelayTrackID(2), layers: 3))])
    }
}
