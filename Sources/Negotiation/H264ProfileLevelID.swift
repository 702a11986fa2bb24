/// The `profile-level-id` format parameter of H.264 (RFC 6184 section
/// 8.1): three bytes in six hex digits, `profile_idc`, `profile-iop` (the
/// constraint_set0..5 flags of the SPS) and `level_idc`. A missing one
/// means `42000a`, Baseline level 1.0.
///
/// The profile is read from `profile_idc` and the flags together, as RFC
/// 6184 Table 5 does: Constrained Baseline is `42` with constraint_set1,
/// but also `4D` with constraint_set0 and `58` with constraint_set0 and 1;
/// Constrained High (H.264 section A.2.4.2, which libwebrtc and Safari
/// offer as `640c1f`) is `64` with constraint_set4 and 5.
package struct H264ProfileLevelID: Equatable, Sendable {
    package enum Profile: Equatable, Sendable {
        case constrainedBaseline, baseline, main, extended, high, constrainedHigh
        /// High 10, High 4:2:2, High 4:4:4 Predictive (`6E`, `7A`, `F4`),
        /// intra-only variants included, and CAVLC 4:4:4 Intra (`2C`).
        case highBitDepthOrChroma(profileIDC: UInt8)
    }

    package var profileIDC: UInt8
    package var profileIOP: UInt8
    package var levelIDC: UInt8

    /// RFC 6184 section 8.1: what a missing `profile-level-id` means.
    package static let `default` = H264ProfileLevelID(profileIDC: 0x42, profileIOP: 0x00, levelIDC: 0x0A)

    package init(profileIDC: UInt8, profileIOP: UInt8, levelIDC: UInt8) {
        self.profileIDC = profileIDC
        self.profileIOP = profileIOP
        self.levelIDC = levelIDC
    }

    /// Parses six hex digits (either case); nil for anything else.
    package init?(_ text: Substring) {
        let isHex: (UInt8) -> Bool = { (0x30...0x39).contains($0) || (0x41...0x46).contains($0 & 0xDF) }
        guard text.utf8.count == 6, text.utf8.allSatisfy(isHex), let value = UInt32(text, radix: 16) else {
            return nil
        }
        profileIDC = UInt8(truncatingIfNeeded: value >> 16)
        profileIOP = UInt8(truncatingIfNeeded: value >> 8)
        levelIDC = UInt8(truncatingIfNeeded: value)
    }

    /// The profile per RFC 6184 Table 5 (and Constrained High); nil for a
    /// combination the table does not name (a reserved flag set, an
    /// unknown `profile_idc`).
    package var profile: Profile? {
        let iop = profileIOP
        // Bits from the most significant: constraint_set0 ... set5, then
        // two reserved zero bits (H.264 section 7.4.2.1.1).
        let set0 = iop & 0x80 != 0
        let set1 = iop & 0x40 != 0
        guard iop & 0x03 == 0 else { return nil }
        switch profileIDC {
        case 0x42:
            guard iop & 0x0F == 0 else { return nil }
            return set1 ? .constrainedBaseline : .baseline
        case 0x4D:
            guard iop & 0x0F == 0 else { return nil }
            if set0 { return .constrainedBaseline }
            return iop & 0x20 == 0 ? .main : nil
        case 0x58:
            guard iop & 0x0F == 0 else { return nil }
            switch (set0, set1) {
            case (true, true): return .constrainedBaseline
            case (true, false): return .baseline
            case (false, false): return .extended
            case (false, true): return nil  // not in Table 5
            }
        case 0x64:
            switch iop {
            case 0x00: return .high
            case 0x0C: return .constrainedHigh
            default: return nil
            }
        case 0x6E, 0x7A, 0xF4:
            return iop == 0x00 || iop == 0x10 ? .highBitDepthOrChroma(profileIDC: profileIDC) : nil
        case 0x2C:
            return iop == 0x10 ? .highBitDepthOrChroma(profileIDC: profileIDC) : nil
        default:
            return nil
        }
    }

    /// Whether a decoder of `receiver`'s profile decodes a stream of ours.
    /// The same profile always does; beyond that only the subsets H.264
    /// Annex A guarantees: a Constrained Baseline stream conforms to
    /// Baseline, Main, Extended and High (sections A.2.1.1, A.2.2, A.2.3,
    /// A.2.4), Main and Constrained High streams to High. The level is
    /// not compared: an SFU forwards the publisher's level as it is, and
    /// browsers' decoders take any level (docs/SIMULCAST.md, "Codecs").
    package func isDecodable(by receiver: H264ProfileLevelID) -> Bool {
        guard let mine = profile, let theirs = receiver.profile else { return false }
        if mine == theirs { return true }
        switch (mine, theirs) {
        case (.constrainedBaseline, .baseline), (.constrainedBaseline, .main), (.constrainedBaseline, .extended),
            (.constrainedBaseline, .high), (.constrainedBaseline, .constrainedHigh),
            (.main, .high), (.constrainedHigh, .high):
            return true
        default:
            return false
        }
    }
}
