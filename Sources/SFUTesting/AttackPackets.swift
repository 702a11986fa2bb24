/// Hostile RTP and RTCP, as a participant holding valid keys could send
/// them (issue #12, "The adversary's suite"): every count at the most the
/// header field allows, lengths that lie, SSRCs never negotiated, feedback
/// about packets never sent. Plain packets before SRTP: the attacker's own
/// transport protects them, so they reach the server's parsers.
///
/// Built byte by byte, not through the RTCP serializers, because those
/// clip counts to what is valid and an attacker does not.
package enum AttackPackets {
    /// Bytes of the largest compound the attacker sends: one datagram
    /// under a 1,280-byte path MTU with the SRTCP trailer.
    package static let datagramBudget = 1200

    /// An RTCP header (RFC 3550 section 6.4.1): version 2, no padding,
    /// `count` in the 5-bit field, `lengthWords` the length in 32-bit
    /// words minus one, true or not.
    package static func rtcpHeader(count: Int, type: UInt8, lengthWords: Int) -> [UInt8] {
        [0x80 | UInt8(count & 0x1F), type, UInt8(truncatingIfNeeded: lengthWords >> 8), UInt8(truncatingIfNeeded: lengthWords)]
    }

    static func word(_ v: UInt32) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8),
            UInt8(truncatingIfNeeded: v),
        ]
    }

    /// `body` behind a header whose length field is the truth.
    static func rtcp(count: Int, type: UInt8, body: [UInt8]) -> [UInt8] {
        precondition(body.count % 4 == 0)
        return rtcpHeader(count: count, type: type, lengthWords: body.count / 4) + body
    }

    /// One report block (RFC 3550 section 6.4.1) about `source`, claiming
    /// 100 % loss and a huge jitter.
    static func reportBlock(source: UInt32, seed: UInt32) -> [UInt8] {
        word(source) + [0xFF, 0x7F, 0xFF, 0xFF] + word(seed &* 2_654_435_761) + word(0xFFFF_FFFF) + word(seed) + word(seed)
    }

    /// SR with 31 report blocks (the 5-bit maximum), each about a
    /// different made-up source, then SDES: 784 bytes.
    package static func senderReportMaximumBlocks(sender: UInt32, seed: UInt32) -> [UInt8] {
        var body = word(sender) + word(0xE000_0000 | seed) + word(seed) + word(seed &* 90) + word(seed) + word(seed &* 1200)
        for i in 0..<31 { body += reportBlock(source: seed &* 31 &+ UInt32(i), seed: seed) }
        return rtcp(count: 31, type: 200, body: body) + sourceDescriptionMaximumChunks(seed: seed, chunks: 1)
    }

    /// RR with 31 report blocks, all about `source` (the stream the server
    /// sends this subscriber): 31 loss reports per packet.
    package static func receiverReportMaximumBlocks(sender: UInt32, about source: UInt32, seed: UInt32) -> [UInt8] {
        var body = word(sender)
        for _ in 0..<31 { body += reportBlock(source: source, seed: seed) }
        return rtcp(count: 31, type: 201, body: body)
    }

    /// SDES with `chunks` chunks (31 at most in the count field), each of
    /// a new SSRC with as many short items as fit the datagram budget.
    package static func sourceDescriptionMaximumChunks(seed: UInt32, chunks: Int = 31) -> [UInt8] {
        let perChunk = (datagramBudget - 8) / max(chunks, 1)
        var body: [UInt8] = []
        for c in 0..<chunks {
            var chunk = word(seed &* 7919 &+ UInt32(c))
            // Items of type 1..8 with 1-byte texts; then the end (0) and
            // padding to the 32-bit boundary (RFC 3550 section 6.5).
            var item = 0
            while chunk.count + 3 + 4 <= perChunk {
                chunk += [UInt8(1 + item % 8), 1, 0x41]
                item += 1
            }
            chunk.append(0)
            while chunk.count % 4 != 0 { chunk.append(0) }
            body += chunk
        }
        return rtcp(count: chunks, type: 202, body: body)
    }

    /// BYE for 31 made-up sources with a 255-byte reason.
    package static func goodbyeMaximumSources(seed: UInt32) -> [UInt8] {
        var body: [UInt8] = []
        for i in 0..<31 { body += word(seed &* 104_729 &+ UInt32(i)) }
        body += [255] + [UInt8](repeating: 0x52, count: 255)
        return rtcp(count: 31, type: 203, body: body)
    }

    /// APP (RFC 3550 section 6.7) with a 1,100-byte payload.
    package static func applicationDefinedLarge(sender: UInt32) -> [UInt8] {
        rtcp(count: 31, type: 204, body: word(sender) + Array("EVIL".utf8) + [UInt8](repeating: 0xEE, count: 1100))
    }

    /// XR (RFC 3611, packet type 207), which we do not parse: blocks of an
    /// unknown type filling the budget.
    package static func extendedReportLarge(sender: UInt32) -> [UInt8] {
        var body = word(sender)
        while body.count + 4 + 8 <= datagramBudget - 4 {
            body += [0xFE, 0, 0, 1] + word(0xDEAD_BEEF)
        }
        return rtcp(count: 0, type: 207, body: body)
    }

    /// Generic NACK (RFC 4585 section 6.2.1) with as many FCI entries as
    /// fit, each asking for its PID and all 16 following numbers: about
    /// 5,000 sequence numbers in one packet, from `firstPID` on.
    package static func nackMaximum(sender: UInt32, media: UInt32, firstPID: UInt16) -> [UInt8] {
        var body = word(sender) + word(media)
        var pid = firstPID
        while body.count + 4 + 4 <= datagramBudget {
            body += [UInt8(pid >> 8), UInt8(truncatingIfNeeded: pid), 0xFF, 0xFF]
            pid &+= 17
        }
        return rtcp(count: 1, type: 205, body: body)
    }

    /// A compound of as many reduced-size PLIs for `media` as fit (more
    /// than the 64 packets a compound may hold).
    package static func pliFlood(sender: UInt32, media: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        while out.count + 12 <= datagramBudget { out += rtcp(count: 1, type: 206, body: word(sender) + word(media)) }
        return out
    }

    /// 64 PLIs for `media`: the most one compound may hold.
    package static func pliCompoundMaximum(sender: UInt32, media: UInt32) -> [UInt8] {
        (0..<64).flatMap { _ in rtcp(count: 1, type: 206, body: word(sender) + word(media)) }
    }

    /// FIR (RFC 5104 section 4.3.1) with as many entries as fit, all for
    /// `media`, each with a new command sequence number.
    package static func firMaximum(sender: UInt32, media: UInt32, seed: UInt8) -> [UInt8] {
        var body = word(sender) + word(0)
        var n = seed
        while body.count + 4 + 8 <= datagramBudget {
            body += word(media) + [n, 0, 0, 0]
            n &+= 1
        }
        return rtcp(count: 4, type: 206, body: body)
    }

    /// REMB (draft-alvestrand-rmcat-remb) listing 255 SSRCs, the most its
    /// count byte says, with the largest exponent.
    package static func rembMaximum(sender: UInt32, seed: UInt32) -> [UInt8] {
        var body = word(sender) + word(0) + Array("REMB".utf8) + [255, 0xFF, 0xFF, 0xFF]
        for i in 0..<255 { body += word(seed &+ UInt32(i)) }
        return rtcp(count: 15, type: 206, body: body)
    }

    /// Transport-cc feedback (draft-holmer-rmcat-transport-wide-cc-
    /// extensions-01 section 3.1) claiming 65,535 packet statuses in
    /// 9 run-length chunks: "not received" runs cost no delta bytes, so
    /// the packet is 40 bytes.
    package static func transportCCMaximumStatuses(sender: UInt32, media: UInt32, base: UInt16, count: UInt8) -> [UInt8] {
        var body = word(sender) + word(media) + [UInt8(base >> 8), UInt8(truncatingIfNeeded: base), 0xFF, 0xFF]
        body += [0x00, 0x00, 0x01, count]
        var left = 65_535
        while left > 0 {
            let run = min(left, 8191)
            body += [UInt8(run >> 8), UInt8(truncatingIfNeeded: run)]
            left -= run
        }
        while body.count % 4 != 0 { body.append(0) }
        return rtcp(count: 15, type: 205, body: body)
    }

    /// Transport-cc feedback about 1,000 packets (never sent: `base` is far
    /// from what the server numbered), each received with a large delta.
    package static func transportCCNeverSent(sender: UInt32, media: UInt32, base: UInt16, count: UInt8) -> [UInt8] {
        let statuses = 1000
        var body = word(sender) + word(media) + [UInt8(base >> 8), UInt8(truncatingIfNeeded: base)]
        body += [UInt8(statuses >> 8), UInt8(truncatingIfNeeded: statuses)] + [0x00, 0x00, 0x01, count]
        // Run-length chunks of "received, large delta" (symbol 2).
        var left = statuses
        while left > 0 {
            let run = min(left, 8191)
            body += [0x40 | UInt8(run >> 8), UInt8(truncatingIfNeeded: run)]
            left -= run
        }
        for i in 0..<statuses { body += [UInt8(truncatingIfNeeded: i >> 8) & 0x7F, UInt8(truncatingIfNeeded: i)] }
        while body.count % 4 != 0 { body.append(0) }
        return rtcp(count: 15, type: 205, body: body)
    }

    /// A packet whose length field claims `claimedWords` words while the
    /// datagram holds `actualWords`, behind a true RR: the parser must
    /// refuse the compound, not read past it.
    package static func lyingLength(type: UInt8, claimedWords: Int, actualWords: Int, sender: UInt32) -> [UInt8] {
        let rr = rtcp(count: 0, type: 201, body: word(sender))
        let body = (0..<actualWords).flatMap { _ in word(sender) }
        return rr + rtcpHeader(count: 1, type: type, lengthWords: claimedWords) + body
    }

    /// A compound of 290 header-only packets (length 0): more packets than
    /// a compound may hold, each a parse step.
    package static func emptyPacketsCompound() -> [UInt8] {
        (0..<290).flatMap { _ in rtcpHeader(count: 0, type: 201, lengthWords: 0) }
    }

    // MARK: RTP

    /// An RTP header (RFC 3550 section 5.1) with the given CSRCs and a
    /// one-byte extension block (RFC 8285 section 4.2) holding `extension`
    /// (padded to words), then `payload`.
    package static func rtp(
        payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32, csrcs: [UInt32] = [],
        extensionBlock: [UInt8]? = nil, payload: [UInt8], padding: (count: UInt8, claimed: UInt8)? = nil
    ) -> [UInt8] {
        var out: [UInt8] = [
            0x80 | (padding != nil ? 0x20 : 0) | (extensionBlock != nil ? 0x10 : 0) | UInt8(csrcs.count & 0x0F),
            payloadType & 0x7F, UInt8(sequenceNumber >> 8), UInt8(truncatingIfNeeded: sequenceNumber),
        ]
        out += word(timestamp) + word(ssrc)
        for c in csrcs { out += word(c) }
        if var ext = extensionBlock {
            while ext.count % 4 != 0 { ext.append(0) }
            out += [0xBE, 0xDE, UInt8((ext.count / 4) >> 8), UInt8(truncatingIfNeeded: ext.count / 4)] + ext
        }
        out += payload
        if let padding {
            out += [UInt8](repeating: 0, count: max(Int(padding.count) - 1, 0)) + [padding.claimed]
        }
        return out
    }

    /// One-byte extension elements (RFC 8285 section 4.2) `id: value`.
    package static func oneByteElements(_ elements: [(UInt8, [UInt8])]) -> [UInt8] {
        elements.flatMap { [($0.0 << 4) | UInt8(($0.1.count - 1) & 0x0F)] + $0.1 }
    }

    /// 15 CSRCs (the 4-bit maximum) and an extension block of 14 elements
    /// of 16 bytes (the one-byte form's maximum) in front of a VP8 payload.
    package static func rtpMaximumHeader(payloadType: UInt8, sequenceNumber: UInt16, ssrc: UInt32) -> [UInt8] {
        let elements = (1...14).map { (UInt8($0), [UInt8](repeating: UInt8($0), count: 16)) }
        return rtp(
            payloadType: payloadType, sequenceNumber: sequenceNumber, timestamp: UInt32(sequenceNumber) &* 3000, ssrc: ssrc,
            csrcs: (0..<15).map { 0xC5C0_0000 | UInt32($0) }, extensionBlock: oneByteElements(elements),
            payload: [0x90, 0xE0, 0x80, 0x01, 0x00, 0x00, 0x51, 0x42, 0x00, 0xAA])
    }

    /// An extension block whose last element's length runs past the
    /// block (inside a packet whose header length is true, so SRTP takes
    /// it), with a mid element before it.
    package static func rtpLyingExtensionElement(
        payloadType: UInt8, sequenceNumber: UInt16, ssrc: UInt32, midID: UInt8, mid: [UInt8]
    ) -> [UInt8] {
        // The block is 8 bytes: the mid element, then an element claiming
        // 16 bytes with 2 left.
        var ext = oneByteElements([(midID, mid)])
        ext += [0x5F]
        while ext.count < 8 { ext.append(0x11) }
        return rtp(
            payloadType: payloadType, sequenceNumber: sequenceNumber, timestamp: 0, ssrc: ssrc, extensionBlock: ext,
            payload: [0x90, 0xE0, 0x80, 0x01, 0x00, 0x00, 0x51, 0x42, 0x00])
    }

    /// A padding count (RFC 3550 section 5.1, P bit) larger than the
    /// payload and header together.
    package static func rtpLyingPadding(payloadType: UInt8, sequenceNumber: UInt16, ssrc: UInt32) -> [UInt8] {
        rtp(
            payloadType: payloadType, sequenceNumber: sequenceNumber, timestamp: 0, ssrc: ssrc, payload: [0x90, 0xE0],
            padding: (count: 4, claimed: 255))
    }
}
