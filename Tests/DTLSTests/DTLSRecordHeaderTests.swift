import Testing
import Wire

@testable import DTLS

private let alertRecord: [UInt8] =
    [
        21,  // content type: alert
        0xFE, 0xFD,  // version: DTLS 1.2
        0x00, 0x01,  // epoch 1
        0x00, 0x00, 0x00, 0x00, 0x01, 0x02,  // sequence number 258
        0x00, 0x1A,  // length 26
    ] + Array(repeating: 0xAA, count: 26)  // nonce 8 + alert 2 + tag 16

@Test func parsesRecordHeaderFields() throws {
    var reader = ByteReader(alertRecord.span.bytes)
    let header = try DTLSRecordHeader.parse(&reader)
    #expect(header == DTLSRecordHeader(contentType: 21, version: 0xFEFD, epoch: 1, sequenceNumber: 258, length: 26))
    #expect(reader.offset == 13)
}

@Test func parsesFullSequenceNumber() throws {
    let bytes: [UInt8] = [22, 0xFE, 0xFF, 0, 0, 0xAB, 0xCD, 0x01, 0x02, 0x03, 0x04, 0, 0]
    var reader = ByteReader(bytes.span.bytes)
    let header = try DTLSRecordHeader.parse(&reader)
    #expect(header.sequenceNumber == 0xABCD_0102_0304)
    #expect(header.version == 0xFEFF)
}

@Test func screenAcceptsWellFormedDatagrams() throws {
    try DatagramScreen.check(alertRecord.span.bytes)
    // Two records in one datagram, the first an epoch-0 handshake fragment.
    let two: [UInt8] = [22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 5, 0, 2, 0x01, 0x02] + alertRecord
    try DatagramScreen.check(two.span.bytes)
}

@Test func screenRejectsMalformedRecords() {
    func error(_ bytes: [UInt8]) -> DTLSRecordError? {
        do { try DatagramScreen.check(bytes.span.bytes); return nil } catch { return error }
    }
    for length in 1..<13 { #expect(error(Array(alertRecord.prefix(length))) == .truncated) }
    #expect(error(Array(alertRecord.dropLast())) == .lengthBeyondDatagram)
    #expect(error(alertRecord + [21, 0xFE]) == .truncated)  // trailing partial header
    var unknown = alertRecord; unknown[0] = 24  // heartbeat: not used
    #expect(error(unknown) == .unknownContentType(24))
    var rtp = alertRecord; rtp[0] = 0x80  // RTP, not DTLS (RFC 7983)
    #expect(error(rtp) == .unknownContentType(0x80))
    let shortProtected: [UInt8] = [23, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 1, 0, 23] + Array(repeating: 0, count: 23)
    #expect(error(shortProtected) == .ciphertextTooShort)
    let shortPlain: [UInt8] = [22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0]
    #expect(error(shortPlain) == nil)  // epoch 0 is not encrypted
}

/// OpenSSL 3.0 answers a protected record shorter than the AEAD overhead
/// with a fatal alert; the screen keeps such forgeries away from it.
@Test(arguments: [0, 1, 16, 23])
func forgedShortProtectedRecordCannotKillAConnection(length: Int) throws {
    var link = try Link()
    link.handshake()
    var datagram: [UInt8] = [23, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 9, 0, UInt8(length)]
    datagram += Array(repeating: 0x55, count: length)
    link.server.handle(datagram: datagram, now: link.clock.now)
    let reply = link.server.pollTransmit()
    #expect(reply == nil)
    #expect(link.server.droppedDatagrams == 1)
    link.client.close()
    link.settle()
    #expect(link.serverEvents.count == 2)
    #expect(link.serverEvents.last == .closed)
}
