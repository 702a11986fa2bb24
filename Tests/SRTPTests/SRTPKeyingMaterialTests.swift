import SRTP
import Testing
import Wire

// RFC 5764 section 4.2 layout, hand-computed for exporter output bytes
// 0, 1, 2, ...: client key | server key | client salt | server salt.

@Test func splitsAESCMKeyingMaterialByRole() throws {
    let exported = (0..<60).map { UInt8($0) }
    let asClient = try SRTPKeyingMaterial(exported: exported, profile: .aesCM128HMACSHA1_80, role: .client)
    #expect(asClient.local.key == Array(0..<16))  // client_write_SRTP_master_key
    #expect(asClient.remote.key == Array(16..<32))  // server_write_SRTP_master_key
    #expect(asClient.local.salt == Array(32..<46))  // client_write_SRTP_master_salt
    #expect(asClient.remote.salt == Array(46..<60))  // server_write_SRTP_master_salt

    let asServer = try SRTPKeyingMaterial(exported: exported, profile: .aesCM128HMACSHA1_80, role: .server)
    #expect(asServer.local == asClient.remote)
    #expect(asServer.remote == asClient.local)
}

@Test func splitsGCMKeyingMaterialWithTwelveByteSalts() throws {
    let exported = (0..<56).map { UInt8($0) }
    let asServer = try SRTPKeyingMaterial(exported: exported, profile: .aeadAES128GCM, role: .server)
    #expect(asServer.local.key == Array(16..<32))
    #expect(asServer.local.salt == Array(44..<56))
    #expect(asServer.remote.key == Array(0..<16))
    #expect(asServer.remote.salt == Array(32..<44))
    #expect(SRTPKeyingMaterial.exporterLabel == "EXTRACTOR-dtls_srtp")
}

@Test func rejectsKeyingMaterialOfTheWrongLength() {
    for (profile, count) in [
        (SRTPProfile.aesCM128HMACSHA1_80, 59), (.aesCM128HMACSHA1_80, 61),
        (.aesCM128HMACSHA1_80, 56), (.aeadAES128GCM, 60), (.aeadAES128GCM, 0),
    ] {
        #expect(throws: SRTPError.wrongKeyLength(expected: profile.keyingMaterialLength, actual: count)) {
            try SRTPKeyingMaterial(exported: [UInt8](repeating: 1, count: count), profile: profile, role: .client)
        }
    }
}

@Test func rejectsMasterKeyOrSaltOfTheWrongLength() {
    #expect(throws: SRTPError.wrongKeyLength(expected: 16, actual: 15)) {
        try SRTPMasterKey(
            key: [UInt8](repeating: 0, count: 15), salt: [UInt8](repeating: 0, count: 14),
            profile: .aesCM128HMACSHA1_80)
    }
    #expect(throws: SRTPError.wrongKeyLength(expected: 12, actual: 14)) {
        try SRTPMasterKey(
            key: [UInt8](repeating: 0, count: 16), salt: [UInt8](repeating: 0, count: 14),
            profile: .aeadAES128GCM)
    }
}

@Test func sessionRefusesAMasterKeyMadeForTheOtherProfile() throws {
    let cmKey = try masterKey(.aesCM128HMACSHA1_80)
    #expect(throws: SRTPError.wrongKeyLength(expected: 12, actual: 14)) {
        _ = try SRTPSession(profile: .aeadAES128GCM, masterKey: cmKey, direction: .outbound)
    }
}

@Test func bothRolesOfOneHandshakeInteroperate() throws {
    for profile in SRTPProfile.allCases {
        let exported = (0..<profile.keyingMaterialLength).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        let client = try SRTPKeyingMaterial(exported: exported, profile: profile, role: .client)
        let server = try SRTPKeyingMaterial(exported: exported, profile: profile, role: .server)
        var clientSends = try SRTPSession(profile: profile, masterKey: client.local, direction: .outbound)
        var serverReceives = try SRTPSession(profile: profile, masterKey: server.remote, direction: .inbound)
        var serverSends = try SRTPSession(profile: profile, masterKey: server.local, direction: .outbound)
        var clientReceives = try SRTPSession(profile: profile, masterKey: client.remote, direction: .inbound)

        let plain = rtpPacket(sequence: 7)
        let up = try #require(inPlace(plain) { b, n throws(SRTPError) in try clientSends.protectRTP(b, length: n) }.value)
        #expect(inPlace(up) { b, n throws(SRTPError) in try serverReceives.unprotectRTP(b, length: n) }.value == plain)
        let down = try #require(inPlace(plain) { b, n throws(SRTPError) in try serverSends.protectRTP(b, length: n) }.value)
        #expect(inPlace(down) { b, n throws(SRTPError) in try clientReceives.unprotectRTP(b, length: n) }.value == plain)
        // The two directions use different keys.
        #expect(up != down)
    }
}
