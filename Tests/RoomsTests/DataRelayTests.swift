import Testing
import Wire

@testable import Rooms

@Suite struct DataRelayTests {
    @Test func aPlainMessageGoesToEveryoneAndAnAtLineNamesRecipients() throws {
        let all = try DataMessageEnvelope.parse(Array("hello".utf8))
        #expect(all.recipients.isEmpty && Array(all.body) == Array("hello".utf8))
        let named = try DataMessageEnvelope.parse(Array("@ann,ben\nhi".utf8))
        #expect(named.recipients == ["ann", "ben"] && Array(named.body) == Array("hi".utf8))
        let escaped = try DataMessageEnvelope.parse(Array("@\n@home".utf8))
        #expect(escaped.recipients.isEmpty && Array(escaped.body) == Array("@home".utf8))
    }

    @Test func refusesABadRecipientListWithATypedError() {
        #expect(throws: DataMessageEnvelope.ParseError.unterminatedAddress) {
            try DataMessageEnvelope.parse(Array("@ann".utf8))
        }
        #expect(throws: DataMessageEnvelope.ParseError.unterminatedAddress) {
            try DataMessageEnvelope.parse([UInt8(ascii: "@")] + [UInt8](repeating: 0x61, count: 2000) + [0x0A])
        }
        #expect(throws: DataMessageEnvelope.ParseError.tooManyRecipients(limit: 32)) {
            try DataMessageEnvelope.parse(Array(("@" + (0..<33).map { "p\($0)" }.joined(separator: ",") + "\nx").utf8))
        }
        #expect(throws: DataMessageEnvelope.ParseError.invalidUTF8) {
            try DataMessageEnvelope.parse([UInt8(ascii: "@"), 0xC3, 0x0A, 0x61])
        }
    }

    @Test func receiversGetTheSendersIdentityALineBreakAndTheMessage() {
        #expect(DataMessageEnvelope.relayed(from: "ann", body: Array("hi".utf8)[...]) == Array("ann\nhi".utf8))
    }

    @Test func theBucketAllowsTheBurstThenTheRate() {
        var bucket = DataRateBucket()
        let start = Instant(nanoseconds: 1_000_000_000)
        let allowed = (0..<50).filter { _ in bucket.take(now: start, rate: 20, burst: 40) }.count
        #expect(allowed == 40)
        // 20 a second: one token every 50 ms.
        let taken = [49, 50, 60, 10_000].map { bucket.take(now: start + .milliseconds($0), rate: 20, burst: 40) }
        #expect(taken == [false, true, false, true])
    }

    @Test func refusalsAreReportedAtMostOnceASecond() {
        var bucket = DataRateBucket()
        let start = Instant(nanoseconds: 5_000_000_000)
        let reported = [0, 999, 1000].map { bucket.shouldReportRefusal(now: start + .milliseconds($0)) }
        #expect(reported == [true, false, true])
    }

    @Test func oldTokensWithoutPublishDataFollowThePublishGrant() {
        #expect(Grants(publish: true).mayPublishData)
        #expect(!Grants(publish: false).mayPublishData)
        #expect(!Grants(publish: true, publishData: false).mayPublishData)
        #expect(Grants(subscribe: true, publishData: true).mayPublishData)
    }
}
