import Foundation
import SFUTesting
import Testing
import Wire

@testable import DTLS

// Chromium 156's first DTLS flight, captured by Scripts/capture-dtls-fixture
// (see Fixtures/README.md): a DTLS 1.3-capable ClientHello with a
// post-quantum key share, 1413 bytes of handshake body fragmented over two
// records in two datagrams (1200 + 263 bytes). Our server endpoint
// (OpenSSL 3.0, DTLS 1.2 only) must answer it with a DTLS 1.2 ServerHello
// flight that selects AEAD_AES_128_GCM.

// MARK: Fixture loading

/// The captured datagrams, in arrival order (chromium-client-hello-1.bin, -2, ...).
func chromiumClientHelloDatagrams() throws -> [[UInt8]] {
    var datagrams: [[UInt8]] = []
    while let url = Bundle.module.url(
        forResource: "chromium-client-hello-\(datagrams.count + 1)", withExtension: "bin", subdirectory: "Fixtures")
    {
        datagrams.append([UInt8](try Data(contentsOf: url)))
    }
    return datagrams
}

// MARK: Bounds-checked parsing (test code)

struct FixtureParseError: Error, CustomStringConvertible {
    let description: String
}

/// Big-endian cursor over a byte array; every read checks what is left.
struct Cursor {
    let bytes: [UInt8]
    private(set) var offset: Int
    let end: Int

    init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.offset = start
        self.end = min(end ?? bytes.count, bytes.count)
    }

    var remaining: Int { end - offset }

    mutating func take(_ count: Int, _ what: String) throws -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw FixtureParseError(description: "\(what): need \(count) bytes at \(offset), have \(remaining)")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func uint(_ width: Int, _ what: String) throws -> Int {
        try take(width, what).reduce(0) { $0 << 8 | Int($1) }
    }

    mutating func uint8(_ what: String) throws -> Int { try uint(1, what) }
    mutating func uint16(_ what: String) throws -> Int { try uint(2, what) }
    mutating func uint24(_ what: String) throws -> Int { try uint(3, what) }
    mutating func uint48(_ what: String) throws -> Int { try uint(6, what) }
}

/// A DTLSPlaintext record (RFC 6347 section 4.1):
///   0      content type (22 = handshake)
///   1..2   version (0xFEFF DTLS 1.0, 0xFEFD DTLS 1.2)
///   3..4   epoch
///   5..10  sequence number (48 bits)
///   11..12 length, then the fragment.
struct Record {
    let contentType: Int
    let version: Int
    let epoch: Int
    let sequenceNumber: Int
    let fragment: [UInt8]

    /// All records of one datagram; the records must fill it exactly.
    static func all(in datagram: [UInt8]) throws -> [Record] {
        var cursor = Cursor(datagram)
        var records: [Record] = []
        while cursor.remaining > 0 {
            let contentType = try cursor.uint8("record content type")
            let version = try cursor.uint16("record version")
            let epoch = try cursor.uint16("record epoch")
            let sequenceNumber = try cursor.uint48("record sequence number")
            let length = try cursor.uint16("record length")
            let fragment = try cursor.take(length, "record fragment")
            records.append(
                Record(
                    contentType: contentType, version: version, epoch: epoch,
                    sequenceNumber: sequenceNumber, fragment: fragment))
        }
        return records
    }
}

/// A handshake message fragment (RFC 6347 section 4.2.2):
///   0      msg_type (1 ClientHello, 2 ServerHello, 11 Certificate,
///          12 ServerKeyExchange, 13 CertificateRequest, 14 ServerHelloDone)
///   1..3   length (of the whole message body)
///   4..5   message_seq
///   6..8   fragment_offset
///   9..11  fragment_length, then the fragment bytes.
struct HandshakeFragment {
    let type: Int
    let length: Int
    let messageSeq: Int
    let fragmentOffset: Int
    let body: [UInt8]

    /// All handshake fragments in a plaintext handshake record (a record may
    /// carry several).
    static func all(in record: Record) throws -> [HandshakeFragment] {
        guard record.contentType == 22, record.epoch == 0 else {
            throw FixtureParseError(description: "not a plaintext handshake record")
        }
        var cursor = Cursor(record.fragment)
        var fragments: [HandshakeFragment] = []
        while cursor.remaining > 0 {
            let type = try cursor.uint8("msg_type")
            let length = try cursor.uint24("handshake length")
            let messageSeq = try cursor.uint16("message_seq")
            let fragmentOffset = try cursor.uint24("fragment_offset")
            let fragmentLength = try cursor.uint24("fragment_length")
            guard fragmentOffset + fragmentLength <= length else {
                throw FixtureParseError(description: "fragment beyond message length")
            }
            let body = try cursor.take(fragmentLength, "handshake fragment")
            fragments.append(
                HandshakeFragment(
                    type: type, length: length, messageSeq: messageSeq,
                    fragmentOffset: fragmentOffset, body: body))
        }
        return fragments
    }
}

/// A whole handshake message, reassembled from its fragments.
struct HandshakeMessage: Equatable {
    let type: Int
    let messageSeq: Int
    let body: [UInt8]

    /// Reassembles fragments (any order, overlaps allowed if consistent) into
    /// messages ordered by message_seq; throws on gaps or conflicts.
    static func reassemble(_ fragments: [HandshakeFragment]) throws -> [HandshakeMessage] {
        var bySeq: [Int: (type: Int, body: [UInt8], filled: [Bool])] = [:]
        for fragment in fragments {
            var entry =
                bySeq[fragment.messageSeq]
                ?? (
                    fragment.type, [UInt8](repeating: 0, count: fragment.length),
                    [Bool](repeating: false, count: fragment.length)
                )
            guard entry.type == fragment.type, entry.body.count == fragment.length else {
                throw FixtureParseError(description: "fragments of message \(fragment.messageSeq) disagree")
            }
            for (i, byte) in fragment.body.enumerated() {
                let at = fragment.fragmentOffset + i
                guard !entry.filled[at] || entry.body[at] == byte else {
                    throw FixtureParseError(description: "overlapping fragments differ at \(at)")
                }
                entry.body[at] = byte
                entry.filled[at] = true
            }
            bySeq[fragment.messageSeq] = entry
        }
        return try bySeq.sorted { $0.key < $1.key }.map { seq, entry in
            guard entry.filled.allSatisfy({ $0 }) else {
                throw FixtureParseError(description: "message \(seq) has gaps")
            }
            return HandshakeMessage(type: entry.type, messageSeq: seq, body: entry.body)
        }
    }

    /// Every handshake message carried by a list of datagrams.
    static func all(in datagrams: [[UInt8]]) throws -> [HandshakeMessage] {
        let fragments = try datagrams.flatMap { try Record.all(in: $0) }.flatMap { try HandshakeFragment.all(in: $0) }
        return try reassemble(fragments)
    }
}

/// Hello extensions (RFC 5246 section 7.4.1.4): type(2) length(2) data,
/// inside a 2-byte total length that must match exactly.
func helloExtensions(_ cursor: inout Cursor) throws -> [(type: Int, data: [UInt8])] {
    let total = try cursor.uint16("extensions length")
    var list = Cursor(try cursor.take(total, "extensions"))
    guard cursor.remaining == 0 else { throw FixtureParseError(description: "bytes after the extensions") }
    var extensions: [(type: Int, data: [UInt8])] = []
    while list.remaining > 0 {
        let type = try list.uint16("extension type")
        let length = try list.uint16("extension length")
        extensions.append((type, try list.take(length, "extension data")))
    }
    return extensions
}

/// The fields of a ClientHello we check (RFC 6347 section 4.2.1, RFC 5246
/// section 7.4.1.2): client_version(2) random(32) session_id(1+n)
/// cookie(1+n) cipher_suites(2+n) compression_methods(1+n) extensions.
struct ClientHello {
    let clientVersion: Int
    let cookie: [UInt8]
    let cipherSuites: [Int]
    let extensions: [(type: Int, data: [UInt8])]

    init(_ body: [UInt8]) throws {
        var cursor = Cursor(body)
        clientVersion = try cursor.uint16("client_version")
        _ = try cursor.take(32, "random")
        _ = try cursor.take(try cursor.uint8("session_id length"), "session_id")
        cookie = try cursor.take(try cursor.uint8("cookie length"), "cookie")
        var suites = Cursor(try cursor.take(try cursor.uint16("cipher_suites length"), "cipher_suites"))
        var cipherSuites: [Int] = []
        while suites.remaining > 0 { cipherSuites.append(try suites.uint16("cipher suite")) }
        self.cipherSuites = cipherSuites
        _ = try cursor.take(try cursor.uint8("compression_methods length"), "compression_methods")
        extensions = try helloExtensions(&cursor)
    }

    func `extension`(_ type: Int) -> [UInt8]? { extensions.first { $0.type == type }?.data }
}

/// The fields of a ServerHello we check (RFC 5246 section 7.4.1.3):
/// server_version(2) random(32) session_id(1+n) cipher_suite(2)
/// compression_method(1) extensions.
struct ServerHello {
    let serverVersion: Int
    let cipherSuite: Int
    let compressionMethod: Int
    let extensions: [(type: Int, data: [UInt8])]

    init(_ body: [UInt8]) throws {
        var cursor = Cursor(body)
        serverVersion = try cursor.uint16("server_version")
        _ = try cursor.take(32, "random")
        _ = try cursor.take(try cursor.uint8("session_id length"), "session_id")
        cipherSuite = try cursor.uint16("cipher_suite")
        compressionMethod = try cursor.uint8("compression_method")
        extensions = try helloExtensions(&cursor)
    }

    func `extension`(_ type: Int) -> [UInt8]? { extensions.first { $0.type == type }?.data }
}

/// The use_srtp extension data (RFC 5764 section 4.1.1):
/// SRTPProtectionProfiles as a 2-byte length and 2-byte profile ids, then
/// srtp_mki as a 1-byte length and bytes; nothing after.
func useSRTP(_ data: [UInt8]) throws -> (profiles: [Int], mki: [UInt8]) {
    var cursor = Cursor(data)
    let listLength = try cursor.uint16("SRTPProtectionProfiles length")
    guard listLength % 2 == 0 else { throw FixtureParseError(description: "odd profile list length") }
    var list = Cursor(try cursor.take(listLength, "SRTPProtectionProfiles"))
    var profiles: [Int] = []
    while list.remaining > 0 { profiles.append(try list.uint16("profile")) }
    let mki = try cursor.take(try cursor.uint8("srtp_mki length"), "srtp_mki")
    guard cursor.remaining == 0 else { throw FixtureParseError(description: "bytes after srtp_mki") }
    return (profiles, mki)
}

/// Two-byte-length-prefixed list of 2-byte values (supported_groups) or
/// one-byte-length-prefixed (supported_versions, RFC 8446 section 4.2.1).
func uint16List(_ data: [UInt8], lengthWidth: Int) throws -> [Int] {
    var cursor = Cursor(data)
    var list = Cursor(try cursor.take(try cursor.uint(lengthWidth, "list length"), "list"))
    guard cursor.remaining == 0 else { throw FixtureParseError(description: "bytes after the list") }
    var values: [Int] = []
    while list.remaining > 0 { values.append(try list.uint16("value")) }
    return values
}

let useSRTPExtension = 0x000E  // RFC 5764 section 4.1.1
let supportedVersionsExtension = 0x002B  // RFC 8446 section 4.2.1
let keyShareExtension = 0x0033  // RFC 8446 section 4.2.8

// MARK: The captured ClientHello

@Suite struct ChromiumClientHelloFixtureTests {
    @Test func isOneClientHelloOf1413BytesInTwoDatagrams() throws {
        let datagrams = try chromiumClientHelloDatagrams()
        #expect(datagrams.map(\.count) == [1200, 263])
        #expect(datagrams.reduce(0) { $0 + $1.count } == 1463)
        let records = try datagrams.map { try Record.all(in: $0) }
        #expect(records.map(\.count) == [1, 1])  // one record per datagram
        for (index, record) in records.joined().enumerated() {
            #expect(record.contentType == 22)  // handshake
            #expect(record.version == 0xFEFF)  // DTLS 1.0 record layer, as TLS 1.3 hellos do
            #expect(record.epoch == 0)
            #expect(record.sequenceNumber == index)
        }
        let fragments = try records.joined().flatMap { try HandshakeFragment.all(in: $0) }
        #expect(fragments.map(\.type) == [1, 1])  // ClientHello
        #expect(fragments.map(\.length) == [1413, 1413])
        #expect(fragments.map(\.messageSeq) == [0, 0])
        #expect(fragments.map(\.fragmentOffset) == [0, 1175])
        #expect(fragments.map(\.body.count) == [1175, 238])
        let messages = try HandshakeMessage.reassemble(fragments)
        #expect(messages.map(\.type) == [1])
        #expect(messages.first?.body.count == 1413)
    }

    @Test func listsSRTPProfilesCM80ThenAES256GCMThenAES128GCM() throws {
        let message = try #require(try HandshakeMessage.all(in: chromiumClientHelloDatagrams()).first)
        let hello = try ClientHello(message.body)
        let srtp = try useSRTP(try #require(hello.extension(useSRTPExtension)))
        // SRTP_AES128_CM_HMAC_SHA1_80, SRTP_AEAD_AES_256_GCM, SRTP_AEAD_AES_128_GCM.
        #expect(srtp.profiles == [0x0001, 0x0008, 0x0007])
        #expect(srtp.mki.isEmpty)
    }

    @Test func offersDTLS13And12WithAPostQuantumKeyShare() throws {
        let message = try #require(try HandshakeMessage.all(in: chromiumClientHelloDatagrams()).first)
        let hello = try ClientHello(message.body)
        #expect(hello.clientVersion == 0xFEFD)  // legacy_version: DTLS 1.2
        #expect(hello.cookie.isEmpty)
        let versions = try uint16List(try #require(hello.extension(supportedVersionsExtension)), lengthWidth: 1)
        #expect(versions == [0xFEFC, 0xFEFD])  // DTLS 1.3, DTLS 1.2
        // key_share (RFC 8446 section 4.2.8): client_shares<2-byte length>
        // of group(2) key_exchange<2-byte length>.
        var shares = Cursor(try #require(hello.extension(keyShareExtension)))
        var list = Cursor(try shares.take(try shares.uint16("client_shares length"), "client_shares"))
        var groups: [(group: Int, keyLength: Int)] = []
        while list.remaining > 0 {
            let group = try list.uint16("group")
            let key = try list.take(try list.uint16("key_exchange length"), "key_exchange")
            groups.append((group, key.count))
        }
        // X25519MLKEM768 (1184-byte ML-KEM key + 32-byte X25519), then X25519.
        #expect(groups.map(\.group) == [0x11EC, 0x001D])
        #expect(groups.map(\.keyLength) == [1216, 32])
        // TLS 1.3 suites first, then the DTLS 1.2 ones. Of our server's two
        // (ECDHE-ECDSA-AES128-GCM 0xC02B, -AES256-GCM 0xC02C) only 0xC02B is
        // offered.
        #expect(
            hello.cipherSuites == [
                0x1301, 0x1302, 0x1303,  // TLS_AES_128_GCM_SHA256, _256_GCM_SHA384, CHACHA20_POLY1305
                0xC02B, 0xC02F,  // ECDHE-ECDSA/RSA-AES128-GCM-SHA256
                0xCCA9, 0xCCA8,  // ECDHE-ECDSA/RSA-CHACHA20-POLY1305
                0xC009, 0xC013, 0xC00A, 0xC014,  // ECDHE-ECDSA/RSA-AES128/256-SHA (CBC)
                0x009C, 0x002F, 0x0035,  // RSA-AES128-GCM, RSA-AES128-SHA, RSA-AES256-SHA
            ])
    }
}

// MARK: Our server's answer

@Suite struct ServerAnswersChromiumClientHelloTests {
    /// Feeds the datagrams in order to a fresh server endpoint and returns
    /// what it sent and reported.
    func answer(_ datagrams: [[UInt8]]) throws -> (sent: [[UInt8]], events: [DTLSEvent], deadline: Instant?) {
        let certificate = try makeCertificate()
        // Any expected fingerprint: the handshake cannot finish anyway.
        var server = try DTLSEndpoint(
            role: .server, certificate: certificate,
            expectedPeerFingerprints: [certificate.fingerprint(.sha256)])
        let clock = VirtualClock()
        var sent: [[UInt8]] = []
        var events: [DTLSEvent] = []
        for datagram in datagrams {
            server.handle(datagram: datagram, now: clock.now)
            while let out = server.pollTransmit() { sent.append(out) }
            while let event = server.pollEvent() { events.append(event) }
        }
        #expect(server.droppedDatagrams == 0)
        return (sent, events, server.nextDeadline)
    }

    @Test func answersWithADTLS12ServerHelloFlight() throws {
        let (sent, events, deadline) = try answer(try chromiumClientHelloDatagrams())
        #expect(events.isEmpty)  // no .failed
        #expect(!sent.isEmpty)
        #expect(deadline != nil)  // the flight awaits Chromium's reply
        for datagram in sent {
            #expect(datagram.count <= 1200)
            for record in try Record.all(in: datagram) {
                #expect(record.contentType == 22)
                #expect(record.version == 0xFEFD)  // DTLS 1.2 record layer
                #expect(record.epoch == 0)
            }
        }
        let messages = try HandshakeMessage.all(in: sent)
        // ServerHello, Certificate, ServerKeyExchange, CertificateRequest,
        // ServerHelloDone (RFC 5246 section 7.3, ECDHE_ECDSA with a client
        // certificate requested).
        #expect(messages.map(\.type) == [2, 11, 12, 13, 14])
        #expect(messages.map(\.messageSeq) == [0, 1, 2, 3, 4])
        let serverHello = try ServerHello(try #require(messages.first).body)
        #expect(serverHello.serverVersion == 0xFEFD)  // DTLS 1.2, not 1.3
        #expect(serverHello.compressionMethod == 0)
        #expect(serverHello.cipherSuite == 0xC02B)  // ECDHE-ECDSA-AES128-GCM-SHA256
        #expect(serverHello.extension(supportedVersionsExtension) == nil)  // a 1.2 ServerHello
    }

    @Test func selectsAEADAES128GCMFromChromiumsProfiles() throws {
        let (sent, _, _) = try answer(try chromiumClientHelloDatagrams())
        let messages = try HandshakeMessage.all(in: sent)
        let serverHello = try ServerHello(try #require(messages.first { $0.type == 2 }).body)
        let srtp = try useSRTP(try #require(serverHello.extension(useSRTPExtension)))
        #expect(srtp.profiles == [0x0007])  // SRTP_AEAD_AES_128_GCM, exactly one
        #expect(srtp.mki.isEmpty)
    }

    @Test func waitsForTheSecondFragmentBeforeAnswering() throws {
        let datagrams = try chromiumClientHelloDatagrams()
        try #require(datagrams.count == 2)
        let (sent, events, _) = try answer([datagrams[0]])
        #expect(sent.isEmpty)
        #expect(events.isEmpty)
    }

    @Test func answersTheFragmentsInReverseOrderToo() throws {
        let (sent, events, _) = try answer(try chromiumClientHelloDatagrams().reversed())
        #expect(events.isEmpty)
        let messages = try HandshakeMessage.all(in: sent)
        #expect(messages.map(\.type) == [2, 11, 12, 13, 14])
    }
}

// MARK: The test parser itself

@Test func fixtureParserRejectsTruncatedRecordsAndGaps() throws {
    let datagrams = try chromiumClientHelloDatagrams()
    let first = try #require(datagrams.first)
    // Record length 1187 but 1186 bytes present.
    #expect(throws: FixtureParseError.self) { try Record.all(in: Array(first.dropLast())) }
    // A header cut inside the sequence number.
    #expect(throws: FixtureParseError.self) { try Record.all(in: Array(first.prefix(8))) }
    // Only the first fragment: the ClientHello has a gap from 1175 to 1413.
    #expect(throws: FixtureParseError.self) { try HandshakeMessage.all(in: [first]) }
}
