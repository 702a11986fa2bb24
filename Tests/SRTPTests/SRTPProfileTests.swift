import SRTP
import Testing
import Wire

@Test func mapsDTLSProfileIDsOfRFC5764AndRFC7714() {
    #expect(SRTPProfile(dtlsProfileID: 0x0001) == .aesCM128HMACSHA1_80)
    #expect(SRTPProfile(dtlsProfileID: 0x0007) == .aeadAES128GCM)
    // SRTP_AES128_CM_HMAC_SHA1_32, NULL profiles, AEAD_AES_256_GCM: not ours.
    for id: UInt16 in [0x0000, 0x0002, 0x0005, 0x0006, 0x0008, 0xFFFF] {
        #expect(SRTPProfile(dtlsProfileID: id) == nil)
    }
    for profile in SRTPProfile.allCases {
        #expect(SRTPProfile(dtlsProfileID: profile.dtlsProfileID) == profile)
    }
}

@Test func profileSizesMatchTheRFCs() {
    let cm = SRTPProfile.aesCM128HMACSHA1_80
    #expect(cm.masterKeyLength == 16)
    #expect(cm.masterSaltLength == 14)
    #expect(cm.rtpTrailerLength == 10)
    #expect(cm.rtcpTrailerLength == 14)
    #expect(cm.keyingMaterialLength == 60)

    let gcm = SRTPProfile.aeadAES128GCM
    #expect(gcm.masterKeyLength == 16)
    #expect(gcm.masterSaltLength == 12)
    #expect(gcm.rtpTrailerLength == 16)
    #expect(gcm.rtcpTrailerLength == 20)
    #expect(gcm.keyingMaterialLength == 56)

    #expect(SRTPSession.rtpTrailerRoom == 144)
    #expect(SRTPSession.rtcpTrailerRoom == 148)
}
