import CShim
import Wire

/// SRTP and SRTCP for one direction on OpenSSL (RFC 3711, RFC 7714): the
/// session keys are derived once (RFC 3711 section 4.3) into cipher
/// contexts reused for every packet, which is transformed in place. Per
/// packet nothing is allocated: IVs and tags live in stack buffers, and
/// per-SSRC state (`SRTPStreamTable`) grows only on a new SSRC.
///
/// A class only so that `SRTPSession` can hold either backend; it is made
/// once per session and owned by that session alone.
final class OpenSSLSRTPEngine {
    let profile: SRTPProfile
    private let rtpCipher: OpaquePointer
    private let rtcpCipher: OpaquePointer
    private let rtpSalt: [UInt8]
    private let rtcpSalt: [UInt8]
    private var streams: SRTPStreamTable

    private var isGCM: Bool { profile == .aeadAES128GCM }
    /// HMAC-SHA1-80 (RFC 3711 section 4.2) or the GCM tag (RFC 7714
    /// section 5.2).
    private var tagLength: Int { isGCM ? 16 : 10 }

    /// Keys the two cipher states from `keys` (`SRTPSessionKeys`, derived
    /// from the master key or, for known-answer vectors, given).
    init(
        profile: SRTPProfile, sessionKeys keys: SRTPSessionKeys, encrypt: Bool, replayWindow: Int, maxStreams: Int
    ) throws(SRTPError) {
        self.profile = profile
        let gcm = profile == .aeadAES128GCM
        rtpSalt = keys.rtpSalt
        rtcpSalt = keys.rtcpSalt
        guard
            let rtp = swiftlet_srtp_cipher_new(gcm ? 1 : 0, encrypt ? 1 : 0, keys.rtpKey, keys.rtpAuthKey, keys.rtpAuthKey.count)
        else {
            throw .other(code: 0)
        }
        guard
            let rtcp = swiftlet_srtp_cipher_new(
                gcm ? 1 : 0, encrypt ? 1 : 0, keys.rtcpKey, keys.rtcpAuthKey, keys.rtcpAuthKey.count)
        else {
            swiftlet_srtp_cipher_free(rtp)
            throw .other(code: 0)
        }
        rtpCipher = rtp
        rtcpCipher = rtcp
        streams = SRTPStreamTable(capacity: maxStreams, rtpWindow: replayWindow)
    }

    deinit {
        swiftlet_srtp_cipher_free(rtpCipher)
        swiftlet_srtp_cipher_free(rtcpCipher)
    }

    // MARK: - SRTP (RFC 3711 section 3.3, RFC 7714 section 5)

    /// `base[0 ..< length]` is an RTP packet whose header is `header` bytes
    /// and the caller checked room for the trailer.
    func protectRTP(_ base: UnsafeMutableRawPointer, length: Int, header: Int) throws(SRTPError) -> Int {
        let ssrc = Self.uint32(base, 8), sequence = Self.uint16(base, 2)
        // One index, one packet: a repeat would reuse keystream or IV.
        let (slot, index) = try streams.lookupRTP(ssrc: ssrc, sequence: sequence)
        let target: Int
        if let slot { target = slot } else { target = try streams.insert(ssrc) }
        try withScratch { iv in
            let payload = base.assumingMemoryBound(to: UInt8.self)
            if isGCM {
                rtpGCMIV(iv, ssrc: ssrc, index: index)
                guard
                    swiftlet_srtp_gcm_seal(
                        rtpCipher, iv, payload, header, nil, 0, payload + header, length - header, payload + length) == 1
                else { return .other(code: 0) }
            } else {
                cmIV(iv, salt: rtpSalt, ssrc: ssrc, index: index)
                guard swiftlet_srtp_ctr_xor(rtpCipher, iv, payload + header, length - header) == 1 else { return .other(code: 0) }
                rtpTag(into: iv, payload, length, roc: UInt32(truncatingIfNeeded: index >> 16))
                (payload + length).update(from: iv, count: tagLength)
            }
            return nil
        }
        streams.commitRTP(slot: target, index: index)
        return length + tagLength
    }

    func unprotectRTP(_ base: UnsafeMutableRawPointer, length: Int, header: Int) throws(SRTPError) -> Int {
        let ssrc = Self.uint32(base, 8), sequence = Self.uint16(base, 2)
        let (slot, index) = try streams.lookupRTP(ssrc: ssrc, sequence: sequence)
        // State for a new SSRC is made only after its packet authenticates.
        guard streams.hasRoom(for: slot) else { throw .tooManyStreams }
        let end = length - tagLength
        try withScratch { iv in
            let payload = base.assumingMemoryBound(to: UInt8.self)
            if isGCM {
                rtpGCMIV(iv, ssrc: ssrc, index: index)
                switch swiftlet_srtp_gcm_open(
                    rtpCipher, iv, payload, header, nil, 0, payload + header, end - header, payload + end)
                {
                case 1: break
                case 0: return .authFailure
                default: return .other(code: 0)
                }
            } else {
                rtpTag(into: iv, payload, end, roc: UInt32(truncatingIfNeeded: index >> 16))
                guard swiftlet_srtp_tag_differs(iv, payload + end, tagLength) == 0 else { return .authFailure }
                cmIV(iv, salt: rtpSalt, ssrc: ssrc, index: index)
                guard swiftlet_srtp_ctr_xor(rtpCipher, iv, payload + header, end - header) == 1 else { return .other(code: 0) }
            }
            return nil
        }
        let target: Int
        if let slot { target = slot } else { target = try streams.insert(ssrc) }
        streams.commitRTP(slot: target, index: index)
        return end
    }

    // MARK: - SRTCP (RFC 3711 section 3.4, RFC 7714 section 9)

    /// The first 8 bytes stay clear; the E flag is always set (we always
    /// encrypt) with the 31-bit index in the same word.
    func protectRTCP(_ base: UnsafeMutableRawPointer, length: Int) throws(SRTPError) -> Int {
        let ssrc = Self.uint32(base, 4)
        let (slot, index) = try streams.lookupNextRTCP(ssrc: ssrc)
        let target: Int
        if let slot { target = slot } else { target = try streams.insert(ssrc) }
        let word = UInt32(0x8000_0000) | UInt32(index)
        let payload = base.assumingMemoryBound(to: UInt8.self)
        let header = PacketBounds.rtcpHeaderLength
        try withScratch { iv in
            if isGCM {
                // Ciphertext, tag, then the E flag and index (RFC 7714 section 9.1).
                let indexAt = length + 16
                Self.store(word, payload + indexAt)
                rtcpGCMIV(iv, ssrc: ssrc, index: UInt32(index))
                guard
                    swiftlet_srtp_gcm_seal(
                        rtcpCipher, iv, payload, header, payload + indexAt, 4, payload + header, length - header,
                        payload + length) == 1
                else { return .other(code: 0) }
            } else {
                cmIV(iv, salt: rtcpSalt, ssrc: ssrc, index: index)
                guard swiftlet_srtp_ctr_xor(rtcpCipher, iv, payload + header, length - header) == 1 else {
                    return .other(code: 0)
                }
                Self.store(word, payload + length)
                // The tag covers the header, ciphertext and the index word.
                swiftlet_srtp_hmac_sha1(rtcpCipher, payload, length + 4, nil, 0, iv)
                (payload + length + 4).update(from: iv, count: 10)
            }
            return nil
        }
        streams.commitRTCP(slot: target, index: index)
        return length + profile.rtcpTrailerLength
    }

    /// An SRTCP packet with the E flag clear (RFC 3711 section 3.4: sent
    /// unencrypted, still authenticated) is handled as libsrtp2 does, so
    /// both backends accept and refuse the same packets: with AES-GCM it
    /// is verified with the whole packet as AAD and nothing to decrypt
    /// (RFC 7714 section 9.3, vectors 17.3 and 17.4) and then accepted;
    /// with AES-CM it is `badParameter` before the tag or index is looked
    /// at (libsrtp2's `cant_check`: a session that encrypts takes only
    /// encrypted SRTCP). The E flag is authenticated either way, so no one
    /// without the key can clear it.
    func unprotectRTCP(_ base: UnsafeMutableRawPointer, length: Int) throws(SRTPError) -> Int {
        let ssrc = Self.uint32(base, 4)
        let payload = base.assumingMemoryBound(to: UInt8.self)
        let header = PacketBounds.rtcpHeaderLength
        let end = length - profile.rtcpTrailerLength
        let indexAt = isGCM ? length - 4 : end
        let word = Self.uint32(base, indexAt)
        let encrypted = word & 0x8000_0000 != 0
        guard encrypted || isGCM else { throw .badParameter }
        let index = UInt64(word & 0x7FFF_FFFF)
        let slot = try streams.lookupRTCP(ssrc: ssrc, index: index)
        guard streams.hasRoom(for: slot) else { throw .tooManyStreams }
        try withScratch { iv in
            if isGCM {
                // Encrypted: AAD is the header and the E/index word (section
                // 9.2). Unencrypted: the whole packet and that word (9.3).
                let clear = encrypted ? header : end
                rtcpGCMIV(iv, ssrc: ssrc, index: UInt32(index))
                switch swiftlet_srtp_gcm_open(
                    rtcpCipher, iv, payload, clear, payload + indexAt, 4, payload + clear, end - clear, payload + end)
                {
                case 1: break
                case 0: return .authFailure
                default: return .other(code: 0)
                }
            } else {
                swiftlet_srtp_hmac_sha1(rtcpCipher, payload, end + 4, nil, 0, iv)
                guard swiftlet_srtp_tag_differs(iv, payload + end + 4, 10) == 0 else { return .authFailure }
                cmIV(iv, salt: rtcpSalt, ssrc: ssrc, index: index)
                guard swiftlet_srtp_ctr_xor(rtcpCipher, iv, payload + header, end - header) == 1 else {
                    return .other(code: 0)
                }
            }
            return nil
        }
        let target: Int
        if let slot { target = slot } else { target = try streams.insert(ssrc) }
        streams.commitRTCP(slot: target, index: index)
        return end
    }

    // MARK: - IVs and tags

    /// Runs `body` with a 20-byte stack scratch buffer (an IV or a digest);
    /// `body` returns its failure, if any.
    @inline(__always)
    private func withScratch(_ body: (UnsafeMutablePointer<UInt8>) -> SRTPError?) throws(SRTPError) {
        let failure = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { body($0.baseAddress!) }
        if let failure { throw failure }
    }

    /// AES-CM counter block (RFC 3711 section 4.1.1): (salt << 16) XOR
    /// (SSRC << 64) XOR (index << 16), 16 bytes.
    private func cmIV(_ iv: UnsafeMutablePointer<UInt8>, salt: [UInt8], ssrc: UInt32, index: UInt64) {
        for i in 0..<14 { iv[i] = salt[i] }
        iv[14] = 0; iv[15] = 0
        for i in 0..<4 { iv[4 + i] ^= UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * UInt32(i))) }
        for i in 0..<6 { iv[8 + i] ^= UInt8(truncatingIfNeeded: index >> (40 - 8 * UInt64(i))) }
    }

    /// RFC 7714 section 8.1: 00 00 || SSRC || ROC || SEQ, XOR the salt.
    private func rtpGCMIV(_ iv: UnsafeMutablePointer<UInt8>, ssrc: UInt32, index: UInt64) {
        iv[0] = 0; iv[1] = 0
        Self.store(ssrc, iv + 2)
        Self.store(UInt32(truncatingIfNeeded: index >> 16), iv + 6)
        iv[10] = UInt8(truncatingIfNeeded: index >> 8); iv[11] = UInt8(truncatingIfNeeded: index)
        for i in 0..<12 { iv[i] ^= rtpSalt[i] }
    }

    /// RFC 7714 section 9.1: 00 00 || SSRC || 00 00 || 0 + 31-bit index,
    /// XOR the salt.
    private func rtcpGCMIV(_ iv: UnsafeMutablePointer<UInt8>, ssrc: UInt32, index: UInt32) {
        iv[0] = 0; iv[1] = 0
        Self.store(ssrc, iv + 2)
        iv[6] = 0; iv[7] = 0
        Self.store(index & 0x7FFF_FFFF, iv + 8)
        for i in 0..<12 { iv[i] ^= rtcpSalt[i] }
    }

    /// HMAC-SHA1 over the authenticated portion and the ROC (RFC 3711
    /// section 4.2: M = header || encrypted payload || ROC), 20 bytes.
    private func rtpTag(into out: UnsafeMutablePointer<UInt8>, _ packet: UnsafeMutablePointer<UInt8>, _ length: Int, roc: UInt32)
    {
        withUnsafeBytes(of: roc.bigEndian) { tail in
            swiftlet_srtp_hmac_sha1(rtpCipher, packet, length, tail.baseAddress!.assumingMemoryBound(to: UInt8.self), 4, out)
        }
    }

    private static func uint32(_ base: UnsafeMutableRawPointer, _ offset: Int) -> UInt32 {
        UInt32(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    private static func uint16(_ base: UnsafeMutableRawPointer, _ offset: Int) -> UInt16 {
        UInt16(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    private static func store(_ value: UInt32, _ at: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(at).storeBytes(of: value.bigEndian, as: UInt32.self)
    }
}
