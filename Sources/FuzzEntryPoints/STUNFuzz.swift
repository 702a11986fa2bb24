import STUN

extension FuzzEntryPoints {
    /// Parses arbitrary bytes as a STUN message. On success checks that the
    /// demux test agrees, that every recorded offset lies inside the input
    /// (FINGERPRINT last), that verification runs over the input without
    /// fault, and that rebuilding the parsed fields and parsing again gives
    /// the same values.
    public static func stun(_ data: UnsafeRawBufferPointer) {
        let bytes = RawSpan(_unsafeBytes: data)
        let looksLikeSTUN = STUNMessage.looksLikeSTUN(bytes)
        // The in-place view of the consent path must give the parser's
        // verdict, error for error, and the same ICE fields.
        let parsed: Result<STUNMessage, STUNParseError>
        do { parsed = .success(try STUNMessage.parse(bytes)) } catch { parsed = .failure(error) }
        let viewed: Result<STUNMessageView, STUNParseError>
        do { viewed = .success(try STUNMessageView(bytes)) } catch { viewed = .failure(error) }
        switch (parsed, viewed) {
        case (.success(let m), .success(let v)):
            let header = m.transactionID == v.transactionID && m.type == v.type && m.attributeCount == v.attributeCount
            let ice =
                m.priority == v.priority && m.useCandidate == v.useCandidate && m.iceControlling == v.iceControlling
                && m.iceControlled == v.iceControlled
            let integrity =
                m.messageIntegrity == v.messageIntegrity && m.fingerprint == v.fingerprint
                && m.messageIntegritySHA256 == v.messageIntegritySHA256
            let unknown = m.unknownComprehensionRequired.isEmpty == (v.unknownComprehensionRequiredCount == 0)
            precondition(header && ice && integrity && unknown, "STUNMessageView disagrees with STUNMessage.parse")
            let username = v.withUsername(in: bytes) { String(decoding: $0, as: UTF8.self) }
            precondition(username == m.username, "STUNMessageView's USERNAME differs")
            precondition(v.verifyFingerprint(in: bytes) == m.verifyFingerprint(in: bytes))
        case (.failure(let a), .failure(let b)):
            precondition(a == b, "STUNMessageView throws \(b), STUNMessage.parse \(a)")
        default:
            preconditionFailure("STUNMessageView and STUNMessage.parse disagree on accepting the input")
        }
        guard case .success(let message) = parsed else { return }
        precondition(looksLikeSTUN, "parsed a message that looksLikeSTUN rejects")
        precondition(message.byteCount == data.count)
        precondition(message.attributeCount <= STUNMessage.maxAttributes)
        for location in [message.messageIntegrity, message.messageIntegritySHA256, message.fingerprint] {
            guard let location else { continue }
            precondition(location.offset >= STUNMessage.headerLength && location.offset % 4 == 0)
            precondition(location.valueRange.upperBound <= data.count)
        }
        if let fingerprint = message.fingerprint { precondition(fingerprint.offset + 8 == data.count) }

        _ = message.verifyFingerprint(in: bytes)
        _ = message.verifyIntegrity(key: [0x70, 0x77], in: bytes)

        let rebuilt: [UInt8]
        do {
            rebuilt = try rebuild(message)
        } catch {
            preconditionFailure("could not rebuild a parsed message: \(error)")
        }
        guard let again = try? STUNMessage.parse(rebuilt) else { preconditionFailure("rebuilt message does not parse") }
        precondition(again.type == message.type && again.transactionID == message.transactionID)
        precondition(again.mappedAddress == message.mappedAddress && again.xorMappedAddress == message.xorMappedAddress)
        precondition(again.username == message.username && again.software == message.software)
        precondition(again.realm == message.realm && again.nonce == message.nonce)
        precondition(again.errorCode == message.errorCode && again.unknownAttributes == message.unknownAttributes)
        precondition(again.priority == message.priority && again.useCandidate == message.useCandidate)
        precondition(again.iceControlling == message.iceControlling && again.iceControlled == message.iceControlled)
        precondition(again.fingerprint == nil || again.verifyFingerprint(in: rebuilt))
        precondition(again.messageIntegrity == nil || again.verifyIntegrity(key: [0x70, 0x77], in: rebuilt))
    }

    private static func rebuild(_ m: STUNMessage) throws(STUNBuildError) -> [UInt8] {
        var b = STUNMessageBuilder(type: m.type, transactionID: m.transactionID)
        if let v = m.software { try b.appendSoftware(v) }
        if let v = m.mappedAddress { try b.appendMappedAddress(v) }
        if let v = m.xorMappedAddress { try b.appendXORMappedAddress(v) }
        if let v = m.username { try b.appendUsername(v) }
        if let v = m.realm { try b.appendRealm(v) }
        if let v = m.nonce { try b.appendNonce(v) }
        if let v = m.errorCode { try b.appendErrorCode(v) }
        if let v = m.unknownAttributes { try b.appendUnknownAttributes(v) }
        if let v = m.priority { try b.appendPriority(v) }
        if m.useCandidate { try b.appendUseCandidate() }
        if let v = m.iceControlling { try b.appendICEControlling(tieBreaker: v) }
        if let v = m.iceControlled { try b.appendICEControlled(tieBreaker: v) }
        // A huge UNKNOWN-ATTRIBUTES can leave no room for these two.
        try? b.appendMessageIntegrity(key: [0x70, 0x77])
        try? b.appendFingerprint()
        return b.bytes
    }
}
