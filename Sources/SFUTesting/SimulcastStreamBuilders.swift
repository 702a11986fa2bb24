import Codecs
import RTP
import Wire

/// A synthetic simulcast VP8 publisher for tests of layer selection: one
/// SSRC per spatial layer, 30 frames per second (3000 ticks of 90 kHz),
/// temporal layers in a repeating TID pattern with TL0PICIDX, 15-bit
/// picture IDs per layer, several packets per frame, keyframes every N
/// frames per layer (each layer at its own phase) or on request.
///
/// `nextFrame()` returns every layer's packets of one frame time, lowest
/// layer first. Frame `i` is captured at `i * frameInterval`.
package struct SimulcastStream: Sendable {
    package struct Layer: Sendable {
        package var ssrc: UInt32
        package var firstSequenceNumber: UInt16
        package var firstTimestamp: UInt32
        package var firstPictureID: UInt16
        package var firstTL0PictureIndex: UInt8
        /// Keyframes at frames where `(frame + keyframePhase) % keyframeInterval == 0`.
        package var keyframePhase: Int
        package var width: UInt16
        package var height: UInt16

        package init(
            ssrc: UInt32, firstSequenceNumber: UInt16 = 1000, firstTimestamp: UInt32 = 90_000,
            firstPictureID: UInt16 = 100, firstTL0PictureIndex: UInt8 = 10, keyframePhase: Int = 0, width: UInt16 = 320,
            height: UInt16 = 180
        ) {
            self.ssrc = ssrc
            self.firstSequenceNumber = firstSequenceNumber
            self.firstTimestamp = firstTimestamp
            self.firstPictureID = firstPictureID
            self.firstTL0PictureIndex = firstTL0PictureIndex
            self.keyframePhase = keyframePhase
            self.width = width
            self.height = height
        }
    }

    /// One RTP packet of the stream, with what the generator knows of it.
    package struct Packet: Sendable {
        package var spatialLayer: Int
        package var frame: Int
        package var ssrc: UInt32
        package var sequenceNumber: UInt16
        package var timestamp: UInt32
        package var pictureID: UInt16
        package var tl0PictureIndex: UInt8
        package var temporalLayer: UInt8
        package var layerSync: Bool
        /// The first packet of a keyframe.
        package var isKeyframeStart: Bool
        /// Part of a keyframe (any packet of it).
        package var isKeyframe: Bool
        package var isLastOfFrame: Bool
        /// The VP8 payload (descriptor, payload header, filler).
        package var payload: [UInt8]

        /// The whole RTP packet (payload type 96, marker on the last
        /// packet of the frame).
        package var rtp: [UInt8] {
            RTPBuilders.packet(
                payloadType: 96, sequenceNumber: sequenceNumber, timestamp: timestamp, ssrc: ssrc,
                marker: isLastOfFrame, payload: payload)
        }

        /// The payload's VP8 descriptor, parsed.
        package func descriptor() throws(CodecParseError) -> VP8PayloadDescriptor {
            try VP8PayloadDescriptor(parsing: payload.span.bytes)
        }
    }

    package var layers: [Layer]
    package var keyframeInterval: Int
    /// TIDs of consecutive frames after a keyframe, repeating.
    package var temporalPattern: [UInt8]
    /// A picture of TID > 0 carries Y when no picture of its TID has since
    /// the last keyframe, or the last one with Y is this many frames ago.
    package var layerSyncInterval: Int
    /// Packets per frame of layer `i`: `packetsPerFrame + i` (keyframes two
    /// more).
    package var packetsPerFrame: Int
    package let frameInterval: Duration = .nanoseconds(33_333_333)
    package let ticksPerFrame: UInt32 = 3000

    package private(set) var frame = 0
    private var sequenceNumbers: [UInt16]
    private var pictureIDs: [UInt16]
    private var tl0: [UInt8]
    private var framesSinceKeyframe: [Int]
    private var lastSync: [[Int]]
    private var keyframeRequested: [Bool]

    /// Three layers (SSRCs 0x1000_0001...3, 320x180 to 1280x720) with
    /// distinct first sequence numbers, timestamps and picture IDs, and
    /// keyframe phases 0, 3 and 6 so the layers' keyframes never coincide.
    package static func threeLayers(keyframeInterval: Int = 30, temporalPattern: [UInt8] = [0, 2, 1, 2]) -> Self {
        SimulcastStream(
            layers: [
                Layer(
                    ssrc: 0x1000_0001, firstSequenceNumber: 1000, firstTimestamp: 90_000, firstPictureID: 100,
                    firstTL0PictureIndex: 10, keyframePhase: 0, width: 320, height: 180),
                Layer(
                    ssrc: 0x1000_0002, firstSequenceNumber: 40_000, firstTimestamp: 3_000_000, firstPictureID: 20_000,
                    firstTL0PictureIndex: 200, keyframePhase: 3, width: 640, height: 360),
                Layer(
                    ssrc: 0x1000_0003, firstSequenceNumber: 65_500, firstTimestamp: 4_294_000_000,
                    firstPictureID: 32_700, firstTL0PictureIndex: 250, keyframePhase: 6, width: 1280, height: 720),
            ], keyframeInterval: keyframeInterval, temporalPattern: temporalPattern)
    }

    package init(
        layers: [Layer], keyframeInterval: Int = 30, temporalPattern: [UInt8] = [0, 2, 1, 2], layerSyncInterval: Int = 8,
        packetsPerFrame: Int = 2
    ) {
        self.layers = layers
        self.keyframeInterval = max(1, keyframeInterval)
        self.temporalPattern = temporalPattern.isEmpty ? [0] : temporalPattern
        self.layerSyncInterval = max(1, layerSyncInterval)
        self.packetsPerFrame = max(1, packetsPerFrame)
        sequenceNumbers = layers.map(\.firstSequenceNumber)
        pictureIDs = layers.map(\.firstPictureID)
        tl0 = layers.map { $0.firstTL0PictureIndex &- 1 }
        framesSinceKeyframe = layers.map { _ in 0 }
        lastSync = layers.map { _ in [Int](repeating: Int.min / 2, count: 4) }
        keyframeRequested = layers.map { _ in false }
    }

    /// The RTP timestamp of `frame` on `layer`.
    package func timestamp(frame: Int, layer: Int) -> UInt32 {
        layers[layer].firstTimestamp &+ UInt32(truncatingIfNeeded: frame) &* ticksPerFrame
    }

    /// Capture time of `frame` after `start`.
    package func captureTime(frame: Int, start: Instant) -> Instant {
        start + frameInterval * frame
    }

    /// Makes the next frame of `layer` a keyframe (as a PLI would).
    package mutating func requestKeyframe(layer: Int) {
        guard keyframeRequested.indices.contains(layer) else { return }
        keyframeRequested[layer] = true
    }

    /// Every layer's packets of the next frame, lowest layer first.
    package mutating func nextFrame() -> [Packet] {
        defer { frame += 1 }
        var out: [Packet] = []
        for (index, layer) in layers.enumerated() {
            let isKey = (frame + layer.keyframePhase) % keyframeInterval == 0 || keyframeRequested[index]
            keyframeRequested[index] = false
            if isKey {
                framesSinceKeyframe[index] = 0
                lastSync[index] = [Int](repeating: Int.min / 2, count: 4)
            }
            let tid = isKey ? 0 : temporalPattern[framesSinceKeyframe[index] % temporalPattern.count]
            var sync = false
            if tid > 0 {
                let since = frame - lastSync[index][Int(tid)]
                if since >= layerSyncInterval || lastSync[index][Int(tid)] < frame - framesSinceKeyframe[index] {
                    sync = true
                    lastSync[index][Int(tid)] = frame
                }
            } else {
                tl0[index] &+= 1
            }
            let pictureID = pictureIDs[index]
            pictureIDs[index] = (pictureID &+ 1) & 0x7FFF
            let count = packetsPerFrame + index + (isKey ? 2 : 0)
            for k in 0..<count {
                let payload = RTPBuilders.vp8Payload(
                    pictureID: pictureID, tl0PictureIndex: tl0[index], temporalLayer: tid, layerSync: sync,
                    keyframe: isKey && k == 0, startOfPartition: k == 0, width: layer.width, height: layer.height)
                out.append(
                    Packet(
                        spatialLayer: index, frame: frame, ssrc: layer.ssrc, sequenceNumber: sequenceNumbers[index],
                        timestamp: timestamp(frame: frame, layer: index), pictureID: pictureID,
                        tl0PictureIndex: tl0[index], temporalLayer: tid, layerSync: sync,
                        isKeyframeStart: isKey && k == 0, isKeyframe: isKey, isLastOfFrame: k == count - 1,
                        payload: payload))
                sequenceNumbers[index] &+= 1
            }
            framesSinceKeyframe[index] += 1
        }
        return out
    }
}
