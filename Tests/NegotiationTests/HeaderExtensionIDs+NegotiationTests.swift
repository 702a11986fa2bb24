import RTP
import SDP
import Testing

@testable import Negotiation

@Suite struct HeaderExtensionIDsNegotiationTests {
    @Test func firstOfEachKeepsTheFirstLineOfEachURIAndOfEachId() {
        let maps = [
            ExtensionMap(id: 3, uri: HeaderExtensionURI.transportWideSequenceNumber),
            ExtensionMap(id: 4, uri: HeaderExtensionURI.transportWideSequenceNumber),  // URI taken
            ExtensionMap(id: 3, uri: HeaderExtensionURI.absoluteSendTime),  // id taken
            ExtensionMap(id: 5, uri: HeaderExtensionURI.transmissionTimeOffset),
            ExtensionMap(id: 2, uri: HeaderExtensionURI.absoluteSendTime),
        ]
        #expect(ExtensionMap.firstOfEach(maps).map(\.id) == [3, 5, 2])
    }

    @Test func idsFromMapsSkipALineWhoseIdAnUnknownURITook() {
        let ids = HeaderExtensionIDs(maps: [
            ExtensionMap(id: 5, uri: HeaderExtensionURI.transmissionTimeOffset),
            ExtensionMap(id: 5, uri: HeaderExtensionURI.mid),
            ExtensionMap(id: 1, uri: HeaderExtensionURI.audioLevel),
            ExtensionMap(id: 6, uri: HeaderExtensionURI.audioLevel),
        ])
        #expect(ids == HeaderExtensionIDs(audioLevel: 1))
    }
}
