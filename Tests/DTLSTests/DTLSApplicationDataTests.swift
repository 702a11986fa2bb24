import Testing
import Wire

@testable import DTLS

/// Application data records (RFC 8261: SCTP packets for data channels).
@Suite struct DTLSApplicationDataTests {
    @Test func carriesRecordsBothWaysWithBoundariesKept() throws {
        var link = try Link()
        link.handshake()
        let first: [UInt8] = Array(repeating: 7, count: 1100)
        #expect(first.withUnsafeBytes { link.client.send(applicationData: $0) })
        #expect([UInt8]([1, 2, 3]).withUnsafeBytes { link.client.send(applicationData: $0) })
        #expect([UInt8]([9]).withUnsafeBytes { link.server.send(applicationData: $0) })
        link.settle()
        #expect(link.server.pollApplicationData() == first)
        #expect(link.server.pollApplicationData() == [1, 2, 3])
        #expect(link.server.pollApplicationData() == nil)
        #expect(link.client.pollApplicationData() == [9])
    }

    @Test func aForgedApplicationRecordCostsItselfOnly() throws {
        var link = try Link()
        link.handshake()
        var random = XorShift(seed: 0xDA7A)
        for length in [24, 40, 200, 1100] {
            // Content type 23, DTLS 1.2, epoch 1, a sequence number, garbage.
            var record: [UInt8] = [23, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 99]
            record += [UInt8(length >> 8), UInt8(length & 0xFF)] + random.bytes(length)
            link.server.handle(datagram: record, now: link.clock.now)
        }
        link.settle()
        #expect(link.server.pollApplicationData() == nil)
        #expect(!link.serverEvents.contains { if case .failed = $0 { true } else { false } })
        #expect([UInt8]([5]).withUnsafeBytes { link.client.send(applicationData: $0) })
        link.settle()
        #expect(link.server.pollApplicationData() == [5])
    }

    @Test func sendsNothingBeforeTheHandshakeOrOverARecord() throws {
        var link = try Link()
        #expect(![UInt8]([1]).withUnsafeBytes { link.client.send(applicationData: $0) })
        link.handshake()
        let tooLarge = [UInt8](repeating: 0, count: 16_385)
        #expect(!tooLarge.withUnsafeBytes { link.client.send(applicationData: $0) })
    }
}
