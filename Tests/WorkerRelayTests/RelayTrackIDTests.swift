import Testing
import WorkerRelay

@Suite struct RelayTrackIDTests {
    @Test func feedbackNamesItsTrackAndLayer() {
        let a = RelayFeedback.keyframeRequest(RelayTrackID(7), layer: 2)
        #expect(a != RelayFeedback.keyframeRequest(RelayTrackID(7), layer: 1))
        #expect(RelayTrackID(7).description == "relay7")
    }
}
