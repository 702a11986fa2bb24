/// A STUN method: 12 bits (RFC 8489 section 5). Only Binding is used by ICE;
/// other values parse and round-trip so that the ICE layer can answer them.
package struct STUNMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt16
    /// Fails for values above 0xFFF, which do not fit the 12 method bits.
    package init?(rawValue: UInt16) {
        guard rawValue <= 0xFFF else { return nil }
        self.rawValue = rawValue
    }

    /// Binding (RFC 8489 section 18.2), the only method ICE uses.
    package static let binding = STUNMethod(uncheckedRawValue: 0x001)
    // TURN methods (RFC 8656 section 17).
    package static let allocate = STUNMethod(uncheckedRawValue: 0x003)
    package static let refresh = STUNMethod(uncheckedRawValue: 0x004)
    package static let send = STUNMethod(uncheckedRawValue: 0x006)
    package static let data = STUNMethod(uncheckedRawValue: 0x007)
    package static let createPermission = STUNMethod(uncheckedRawValue: 0x008)
    package static let channelBind = STUNMethod(uncheckedRawValue: 0x009)

    init(uncheckedRawValue: UInt16) { rawValue = uncheckedRawValue & 0xFFF }

    package var description: String {
        switch self {
        case .binding: "Binding"
        case .allocate: "Allocate"
        case .refresh: "Refresh"
        case .send: "Send"
        case .data: "Data"
        case .createPermission: "CreatePermission"
        case .channelBind: "ChannelBind"
        default: "method 0x\(String(rawValue, radix: 16))"
        }
    }
}

/// The two class bits C1 C0 of the message type (RFC 8489 section 5).
package enum STUNClass: UInt8, Hashable, Sendable, CaseIterable {
    case request = 0b00
    case indication = 0b01
    case successResponse = 0b10
    case errorResponse = 0b11
}

/// Method and class, interleaved in the 14 low bits of the first header
/// word (RFC 8489 section 5, figure 3):
///
///     bit  13 12 11 10  9  8  7  6  5  4  3  2  1  0
///          M11 ...  M7 C1 M6 M5 M4 C0 M3 M2 M1 M0
///
/// The two top bits of the 16-bit field are always zero; they are what
/// RFC 7983 demultiplexing keys on.
package struct STUNMessageType: Hashable, Sendable, CustomStringConvertible {
    package var method: STUNMethod
    package var messageClass: STUNClass

    package init(method: STUNMethod, class messageClass: STUNClass) {
        self.method = method
        self.messageClass = messageClass
    }

    /// Decodes the 14 low bits; the caller has checked the top two are zero.
    package init(rawValue: UInt16) {
        let m = (rawValue & 0x000F) | ((rawValue & 0x00E0) >> 1) | ((rawValue & 0x3E00) >> 2)
        let c = ((rawValue & 0x0010) >> 4) | ((rawValue & 0x0100) >> 7)
        method = STUNMethod(uncheckedRawValue: m)
        // `c` is two bits, so every value names a case.
        messageClass = STUNClass(rawValue: UInt8(truncatingIfNeeded: c)) ?? .request
    }

    package var rawValue: UInt16 {
        let m = method.rawValue
        let c = UInt16(messageClass.rawValue)
        return (m & 0x000F) | ((m & 0x0070) << 1) | ((m & 0x0F80) << 2) | ((c & 1) << 4) | ((c & 2) << 7)
    }

    package static let bindingRequest = STUNMessageType(method: .binding, class: .request)
    package static let bindingIndication = STUNMessageType(method: .binding, class: .indication)
    package static let bindingSuccessResponse = STUNMessageType(method: .binding, class: .successResponse)
    package static let bindingErrorResponse = STUNMessageType(method: .binding, class: .errorResponse)

    package var description: String { "\(method) \(messageClass)" }
}
