import Testing

@testable import RTP

@Suite struct HeaderExtensionIDsTests {
    @Test func assignsAKnownURIOnceAndTheFirstIdWins() {
        var ids = HeaderExtensionIDs()
        let first = ids.assign(3, to: HeaderExtensionURI.transportWideSequenceNumber)
        let second = ids.assign(9, to: HeaderExtensionURI.transportWideSequenceNumber)
        #expect(first && !second)
        #expect(ids.transportWideSequenceNumber == 3)
        #expect(ids.id(for: HeaderExtensionURI.transportWideSequenceNumber) == 3)
        #expect(ids == HeaderExtensionIDs(transportWideSequenceNumber: 3))
    }

    @Test func ignoresURIsItHasNoFieldFor() {
        var ids = HeaderExtensionIDs()
        let assigned = ids.assign(5, to: HeaderExtensionURI.transmissionTimeOffset)
        #expect(!assigned)
        #expect(ids == HeaderExtensionIDs())
        #expect(ids.id(for: HeaderExtensionURI.transmissionTimeOffset) == nil)
    }

    @Test func mapsEveryFieldToItsURI() {
        let uris = [
            HeaderExtensionURI.mid, HeaderExtensionURI.rtpStreamID, HeaderExtensionURI.repairedRTPStreamID,
            HeaderExtensionURI.absoluteSendTime, HeaderExtensionURI.transportWideSequenceNumber,
            HeaderExtensionURI.audioLevel, HeaderExtensionURI.videoOrientation, HeaderExtensionURI.absoluteCaptureTime,
        ]
        var ids = HeaderExtensionIDs()
        for (i, uri) in uris.enumerated() { ids.assign(UInt8(i + 1), to: uri) }
        #expect(
            ids
                == HeaderExtensionIDs(
                    mid: 1, rtpStreamID: 2, repairedRTPStreamID: 3, absoluteSendTime: 4, transportWideSequenceNumber: 5,
                    audioLevel: 6, videoOrientation: 7, absoluteCaptureTime: 8))
        #expect(uris.map { ids.id(for: $0) } == [1, 2, 3, 4, 5, 6, 7, 8])
    }

    /// RFC 8285 section 4.2: the one-byte form carries ids 1...14, and an
    /// id names one extension.
    @Test func oneByteFormNeedsDistinctIdsFrom1To14() {
        #expect(HeaderExtensionIDs().isValidForOneByteForm)
        #expect(HeaderExtensionIDs(mid: 1, absoluteCaptureTime: 14).isValidForOneByteForm)
        #expect(!HeaderExtensionIDs(mid: 15).isValidForOneByteForm)
        #expect(!HeaderExtensionIDs(mid: 0).isValidForOneByteForm)
        #expect(!HeaderExtensionIDs(mid: 3, audioLevel: 3).isValidForOneByteForm)
        #expect(!HeaderExtensionIDs(repairedRTPStreamID: 2, videoOrientation: 2).isValidForOneByteForm)
    }
}
