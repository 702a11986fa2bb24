import SFUTesting
import STUN
import Testing
import Wire

/// `STUNMessage.parse`, checked against `STUNMessageView` on the same
/// bytes: every fixture of the STUN tests goes through here, so the view
/// the consent path reads accepts and rejects exactly what the parser
/// does, with the same error, and reads the same ICE fields.
func parsedAlsoByView(_ bytes: [UInt8]) throws(STUNParseError) -> STUNMessage {
    let view: Result<STUNMessageView, STUNParseError>
    do { view = .success(try STUNMessageView(bytes)) } catch { view = .failure(error) }
    let message: STUNMessage
    do {
        message = try STUNMessage.parse(bytes)
    } catch {
        #expect(view.failureValue == error, "the view must reject with the parser's error")
        throw error
    }
    guard case .success(let v) = view else {
        Issue.record("the view rejected what the parser accepts: \(String(describing: view.failureValue))")
        return message
    }
    let span = bytes
    #expect(v.type == message.type && v.transactionID == message.transactionID)
    #expect(v.byteCount == message.byteCount && v.attributeCount == message.attributeCount)
    #expect(v.withUsername(in: span) { String(decoding: $0, as: UTF8.self) } == message.username)
    #expect(v.priority == message.priority && v.useCandidate == message.useCandidate)
    #expect(v.iceControlling == message.iceControlling && v.iceControlled == message.iceControlled)
    #expect(v.messageIntegrity == message.messageIntegrity && v.fingerprint == message.fingerprint)
    #expect(v.messageIntegritySHA256 == message.messageIntegritySHA256)
    #expect(v.unknownComprehensionRequired(in: span) == message.unknownComprehensionRequired)
    #expect(v.verifyFingerprint(in: span) == message.verifyFingerprint(in: span))
    return message
}

extension Result {
    fileprivate var failureValue: Failure? {
        if case .failure(let e) = self { e } else { nil }
    }
}

@Suite struct STUNMessageViewTests {
    let key = STUNMessage.shortTermKey(password: RFC5769.password)

    @Test func viewVerifiesTheSampleRequestInPlace() throws {
        let bytes = RFC5769.sampleRequest
        let view = try STUNMessageView(bytes)
        #expect(view.verifyFingerprint(in: bytes))
        #expect(view.verifyIntegrity(key: key, in: bytes))
        #expect(!view.verifyIntegrity(key: STUNMessage.shortTermKey(password: "wrong"), in: bytes))
        #expect(view.withUsername(in: bytes) { Array($0) } == Array("evtj:h6vY".utf8))
    }

    @Test func viewCountsUnknownComprehensionRequiredAttributesAndTheParserListsThem() throws {
        let bytes = RawSTUN.message(attributes: [(0x7F01, []), (0x7F01, []), (0x7F02, [1, 2, 3, 4]), (0x8F01, [])])
        let view = try STUNMessageView(bytes)
        #expect(view.unknownComprehensionRequiredCount == 3)
        #expect(view.unknownComprehensionRequired(in: bytes).map(\.rawValue) == [0x7F01, 0x7F02])
    }

    @Test func aRepeatedAttributeIsCheckedOnlyTheFirstTime() throws {
        // A second PRIORITY of the wrong length is ignored by both (RFC
        // 8489 section 14: only the first is processed).
        let bytes = RawSTUN.message(attributes: [(0x0024, [0, 0, 0, 1]), (0x0024, [0, 0])])
        #expect(try parsedAlsoByView(bytes).priority == 1)
    }

    // MARK: The success response written in place

    @Test(arguments: [nil, "", "swiftlet", "a longer SOFTWARE value, 33 byte"])
    func inPlaceSuccessResponseEqualsTheBuildersBytes(software: String?) throws {
        let id = TransactionID(bytes: RFC5769.transactionID)!
        let addresses = [
            TransportAddress(ipv4: 192, 0, 2, 1, port: 32853),
            TransportAddress(ipv6: 0x2001_0DB8_1234_5678, 0x0011_2233_4455_6677, port: 32853),
        ]
        for address in addresses {
            let built = try STUNMessageBuilder.bindingSuccessResponse(
                transactionID: id, xorMappedAddress: address, key: key, software: software)
            var out = [UInt8](repeating: 0xEE, count: BindingSuccessResponseWriter.maxLength)
            let length = out.withUnsafeMutableBytes {
                BindingSuccessResponseWriter.write(
                    into: $0, transactionID: id, xorMappedAddress: address, key: key, software: software)
            }
            #expect(length == built.count)
            #expect(Array(out.prefix(length ?? 0)) == built)
            #expect(
                BindingSuccessResponseWriter.length(address: address, softwareLength: software?.utf8.count) == built.count)
        }
    }

    @Test func inPlaceSuccessResponseRefusesAShortBuffer() {
        let address = TransportAddress(ipv4: 192, 0, 2, 1, port: 1)
        var out = [UInt8](repeating: 0, count: 63)
        let length = out.withUnsafeMutableBytes {
            BindingSuccessResponseWriter.write(
                into: $0, transactionID: TransactionID(high: 1, low: 2), xorMappedAddress: address, key: key,
                software: nil)
        }
        #expect(length == nil)
    }
}
