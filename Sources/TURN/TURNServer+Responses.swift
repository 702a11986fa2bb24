import STUN
import Wire

/// Building answers: SOFTWARE, then MESSAGE-INTEGRITY when the request was
/// authenticated (RFC 8489 section 9.2.4: every response to an
/// authenticated request but 400, 401 and 438 carries it, so the client
/// can trust a refusal), then FINGERPRINT.
extension TURNServer {
    /// An error response to `message` with `code`.
    mutating func reply(_ message: STUNMessage, _ code: STUNErrorCode, key: [UInt8]?, to client: TURNClient) {
        var b = STUNMessageBuilder(
            type: STUNMessageType(method: message.type.method, class: .errorResponse), transactionID: message.transactionID)
        try? b.appendErrorCode(code)
        finish(&b, key: code.code == 400 ? nil : key, to: client)
    }

    /// 401 or 438 with REALM and a fresh NONCE (RFC 8489 section 9.2.4).
    mutating func challenge(_ message: STUNMessage, _ code: STUNErrorCode, client: TURNClient, now: Instant) {
        var b = STUNMessageBuilder(
            type: STUNMessageType(method: message.type.method, class: .errorResponse), transactionID: message.transactionID)
        try? b.appendErrorCode(code)
        try? b.appendRealm(configuration.realm)
        try? b.appendNonce(nonce(client: client, now: now))
        finish(&b, key: nil, to: client)
    }

    mutating func finish(_ b: inout STUNMessageBuilder, key: [UInt8]?, to client: TURNClient) {
        output.append(.toClient(client, finished(&b, key: key)))
    }

    func finished(_ b: inout STUNMessageBuilder, key: [UInt8]?) -> [UInt8] {
        if !configuration.software.isEmpty { try? b.appendSoftware(configuration.software) }
        if let key { try? b.appendMessageIntegrity(key: key) }
        try? b.appendFingerprint()
        return b.bytes
    }
}
