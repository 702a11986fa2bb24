import RTCP
import Testing
import Wire

/// Parsed transport-cc feedback is validated but not expanded, and its
/// walker reads the statuses in place (issue #12, defect 3).
@Suite struct TransportCCFeedbackTests {
    @Test func chromeFeedbackWalksToItsStatusesFromAnyPosition() throws {
        let compound = try parseCompound(twccChromeFixture)
        guard case .transportCCFeedback(let feedback) = try #require(compound.packets.first) else {
            Issue.record("not TWCC")
            return
        }
        #expect(feedback.statusCount == 9 && feedback.receivedCount == 6)
        #expect(feedback.chunks == 20..<24 && feedback.deltas == 24..<31)
        let fixture = twccChromeFixture
        let span = fixture.span.bytes
        for start in 0...9 {
            var walker = feedback.statuses(in: span, positions: start..<9)
            var statuses: [TransportCCStatus] = []
            var numbers: [UInt16] = []
            while let result = walker.next() {
                statuses.append(result.status)
                numbers.append(result.sequenceNumber)
            }
            #expect(statuses == Array(twccChromeStatuses[start...]), "from \(start)")
            #expect(numbers == (start..<9).map { 34108 &+ UInt16($0) })
            let visited = walker.visited
            #expect(visited == 9 - start)
        }
        // Arrivals: reference time plus every delta so far, skipped ones too.
        var fromFour = feedback.statuses(in: span, positions: 4..<5)
        let ticks = Int64(6_551_830) * 256 + 155 + 170 + 106 + 170 + 123
        let arrival = fromFour.next()?.arrival
        #expect(arrival == .microseconds(ticks * 250))
    }

    @Test func maximumStatusCountParsesWithoutExpanding() throws {
        // 65,535 "not received" statuses in nine run-length chunks: 40 bytes.
        var bytes: [UInt8] = [0x8F, 205, 0, 9, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 0xFF, 0xFF, 0, 0, 1, 0]
        for _ in 0..<8 { bytes += [0x1F, 0xFF] }
        bytes += [0x00, 0x07, 0, 0]
        let compound = try parseCompound(bytes)
        guard case .transportCCFeedback(let feedback) = try #require(compound.packets.first) else {
            Issue.record("not TWCC")
            return
        }
        #expect(feedback.statusCount == 65535 && feedback.receivedCount == 0)
        #expect(feedback.chunks == 20..<38 && feedback.deltas == 38..<38)
        // A walk of the last ten skips the rest chunk by chunk.
        var walker = feedback.statuses(in: bytes.span.bytes, positions: 65525..<70000)
        var last: TransportCCPacketResult?
        while let r = walker.next() { last = r }
        let visited = walker.visited
        #expect(visited == 10)
        #expect(last == TransportCCPacketResult(sequenceNumber: 1 &+ 65534, status: .notReceived, arrival: nil))
    }
}
