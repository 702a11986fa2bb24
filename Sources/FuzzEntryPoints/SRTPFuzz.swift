import SRTP
import Wire

extension FuzzEntryPoints {
    /// SRTP and SRTCP unprotect on both backends, which must agree. The
    /// first byte picks the profile (bit 0) and the replay window (bits
    /// 1-3: 64 to 204 packets, most not a multiple of 32); the rest is
    /// chunks of control byte, length byte and that many bytes. Control
    /// bit 0: RTCP instead of RTP; bit 1: protect the chunk first with a
    /// sender on each backend (so mutants reach the accept path: replays,
    /// ROC estimates, SRTCP indices); bit 2: then flip one bit of it, the
    /// byte and bit taken from bits 3-7. Senders must give the same bytes
    /// or error; the OpenSSL and libsrtp2 receivers (fixed keys: libsrtp's
    /// own reference keys, so its reference packets authenticate) must
    /// accept and refuse the same chunks with the same error and the same
    /// plaintext, and a protected, untouched chunk that is accepted comes
    /// back as it went in. Neither may trap on any input.
    public static func srtp(_ data: UnsafeRawBufferPointer) {
        guard let first = data.first else { return }
        let profile: SRTPProfile = first & 1 == 0 ? .aesCM128HMACSHA1_80 : .aeadAES128GCM
        let window = 64 + Int(first >> 1 & 7) * 20
        guard
            let key = try? SRTPMasterKey(
                key: profile == .aeadAES128GCM
                    ? [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]
                    : [0xe1, 0xf9, 0x7a, 0x0d, 0x3e, 0x01, 0x8b, 0xe0, 0xd6, 0x4f, 0xa3, 0x2c, 0x06, 0xde, 0x41, 0x39],
                salt: profile == .aeadAES128GCM
                    ? [0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab]
                    : [0x0e, 0xc6, 0x75, 0xad, 0x49, 0x8a, 0xfe, 0xeb, 0xb6, 0x96, 0x0b, 0x3a, 0xab, 0xe6],
                profile: profile),
            var oursOut = try? SRTPSession(
                profile: profile, masterKey: key, direction: .outbound, replayWindow: window, backend: .openssl),
            var theirsOut = try? SRTPSession(
                profile: profile, masterKey: key, direction: .outbound, replayWindow: window, backend: .libsrtp2),
            var oursIn = try? SRTPSession(
                profile: profile, masterKey: key, direction: .inbound, replayWindow: window, backend: .openssl),
            var theirsIn = try? SRTPSession(
                profile: profile, masterKey: key, direction: .inbound, replayWindow: window, backend: .libsrtp2)
        else { preconditionFailure("fixed keys make sessions on both backends") }

        let capacity = 255 + SRTPSession.rtcpTrailerRoom
        var ours = [UInt8](repeating: 0, count: capacity)
        var theirs = [UInt8](repeating: 0, count: capacity)
        var at = 1
        while at + 2 <= data.count {
            let control = data[at]
            let count = min(Int(data[at + 1]), data.count - at - 2)
            let chunk = UnsafeRawBufferPointer(rebasing: data[(at + 2)..<(at + 2 + count)])
            at += 2 + count
            let rtcp = control & 1 != 0
            for i in 0..<count {
                ours[i] = chunk[i]
                theirs[i] = chunk[i]
            }
            var length = count
            if control & 2 != 0 {
                let mine = srtpStep(&oursOut, &ours, length, rtcp)
                let other = srtpStep(&theirsOut, &theirs, length, rtcp)
                checkSRTPAgreement(mine, other, ours, theirs, "protect")
                guard case .success(let protected) = mine else { continue }
                length = protected
                if control & 4 != 0 {
                    let byte = Int(control >> 3) &* 37 % length, bit = UInt8(control >> 3 & 7)
                    ours[byte] ^= 1 << bit
                    theirs[byte] ^= 1 << bit
                }
            }
            let mine = srtpStep(&oursIn, &ours, length, rtcp)
            let other = srtpStep(&theirsIn, &theirs, length, rtcp)
            checkSRTPAgreement(mine, other, ours, theirs, "unprotect")
            if control & 6 == 2, case .success(let plain) = mine {
                precondition(plain == count && (0..<count).allSatisfy { ours[$0] == chunk[$0] }, "round trip changed bytes")
            }
        }
    }

    /// Protect (outbound session) or unprotect (inbound) in place.
    private static func srtpStep(
        _ session: inout SRTPSession, _ buffer: inout [UInt8], _ length: Int, _ rtcp: Bool
    ) -> Result<
        Int, SRTPError
    > {
        buffer.withUnsafeMutableBytes { bytes in
            do throws(SRTPError) {
                switch (session.direction, rtcp) {
                case (.outbound, false): return .success(try session.protectRTP(bytes, length: length))
                case (.outbound, true): return .success(try session.protectRTCP(bytes, length: length))
                case (.inbound, false): return .success(try session.unprotectRTP(bytes, length: length))
                case (.inbound, true): return .success(try session.unprotectRTCP(bytes, length: length))
                }
            } catch { return .failure(error) }
        }
    }

    /// The same error, or the same length and bytes.
    private static func checkSRTPAgreement(
        _ mine: Result<Int, SRTPError>, _ other: Result<Int, SRTPError>, _ ours: [UInt8], _ theirs: [UInt8], _ step: String
    ) {
        precondition(mine == other, "\(step): the backends disagree: \(mine) against \(other)")
        if case .success(let length) = mine {
            precondition(ours[0..<length] == theirs[0..<length], "\(step): the backends give different bytes")
        }
    }
}
