import PeerSession
import RTCP
import RTP
import SFUTesting
import Testing
import Wire

/// Transport-wide arrivals, as the server keeps them per publisher
/// transport and roombot for its subscriber transport: numbers read from
/// the mapped extension, feedback listing them (lost ones included).
@Suite struct TransportWideArrivalsTests {
    private func ms(_ n: Int64) -> Instant { Instant(nanoseconds: n * 1_000_000) }

    private func record(_ arrivals: TransportWideArrivals, number: UInt16, extensionID: UInt8 = 3, at t: Instant) {
        let bytes = RTPBuilders.packet(
            sequenceNumber: number &+ 500, extensions: [(extensionID, [UInt8(number >> 8), UInt8(number & 0xFF)])],
            payload: [1])
        let span = bytes.span.bytes
        arrivals.record(try! RTPHeader(parsing: span), packet: span, arrival: t)
    }

    private func feedback(_ arrivals: TransportWideArrivals, at now: Instant) throws -> [TransportLayerCC] {
        var packets: [[UInt8]] = []
        arrivals.writeFeedback(mediaSSRC: SSRC(9), now: now) { packets.append(Array($0)) }
        return try packets.map { bytes in
            let compound = try RTCPCompoundPacket.parse(bytes.span.bytes)
            // Parsed unexpanded; expanded, the statuses can be read.
            guard case .transportLayerCC(let cc) = try #require(compound.expandedPackets(bytes.span.bytes).first) else {
                throw Failure.notTransportCC
            }
            return cc
        }
    }

    private enum Failure: Error { case notTransportCC }

    @Test func numbersOfTheMappedExtensionAreReportedLostOnesIncluded() throws {
        let arrivals = TransportWideArrivals(reporterSSRC: SSRC(1), extensionID: 3)
        record(arrivals, number: 10, at: ms(0))
        record(arrivals, number: 12, at: ms(2))
        // An extension under another id is not the transport-wide number.
        record(arrivals, number: 40, extensionID: 4, at: ms(3))
        let due = try #require(arrivals.nextFeedback)
        #expect(try feedback(arrivals, at: due - .milliseconds(1)).isEmpty)
        let sent = try feedback(arrivals, at: due)
        #expect(sent.count == 1)
        #expect(sent.first?.baseSequenceNumber == 10)
        #expect(sent.first?.statuses.count == 3)
        #expect(sent.first?.statuses[1] == .notReceived)
        #expect(arrivals.feedbackWritten == 1)
    }

    @Test func nothingIsRecordedBeforeTheSessionMapsTheExtension() {
        let arrivals = TransportWideArrivals(reporterSSRC: SSRC(1))
        record(arrivals, number: 10, at: ms(0))
        #expect(arrivals.nextFeedback == nil)
    }
}
