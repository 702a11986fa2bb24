import SFUTesting
import Testing
import Wire

@testable import Codecs

@Suite struct SFUTestingBuilderTests {
    @Test func vp8PayloadBuilderProducesParseableKeyframe() throws {
        let d = try vp8(
            RTPBuilders.vp8Payload(
                pictureID: 0x0ABC, tl0PictureIndex: 5, temporalLayer: 2, layerSync: true,
                keyframe: true, width: 1280, height: 720))
        #expect(d.pictureID == 0x0ABC && d.tl0PictureIndex == 5 && d.temporalLayerID == 2 && d.isLayerSync)
        #expect(d.isKeyframe && d.keyframeWidth == 1280 && d.keyframeHeight == 720)
        #expect(!(try vp8(RTPBuilders.vp8Payload()).isKeyframe))
    }

    @Test func opusPayloadBuilderProducesTwentyMillisecondFrame() throws {
        #expect(try opus(RTPBuilders.opusPayload()).packetDuration == .milliseconds(20))
    }
}
