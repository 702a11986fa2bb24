import RoomProtocol

extension FuzzEntryPoints {
    /// The room protocol's JSON codec, both directions: the text as a
    /// client's message (the server's reader) and as a server's (roombot's),
    /// under small limits and the standard ones. What decodes is written
    /// again and reads back equal; what does not gets a typed error, and a
    /// text over a limit is refused by that limit whatever else is wrong.
    public static func roomProtocol(_ data: UnsafeRawBufferPointer) {
        // The WebSocket layer hands over only valid UTF-8 (RFC 6455
        // section 8.1); anything else is not a text message.
        guard let text = String(validating: data, as: UTF8.self) else { return }
        let small = RoomProtocolLimits(messageBytes: 4096, depth: 6, entries: 8)
        for limits in [small, .standard] {
            check(text, limits: limits, as: ClientMessage.self)
            check(text, limits: limits, as: ServerMessage.self)
        }
    }

    private static func check<Message: RoomProtocolMessage>(_ text: String, limits: RoomProtocolLimits, as: Message.Type) {
        let message: Message
        do throws(RoomProtocolError) {
            message = try Message(json: text, limits: limits)
        } catch {
            switch error {
            case .tooLarge(let limit):
                precondition(limit == limits.messageBytes && text.utf8.count > limit, "tooLarge within the limit")
            case .tooDeep(let limit): precondition(limit == limits.depth)
            case .tooManyEntries(let limit): precondition(limit == limits.entries)
            case .unencodable: preconditionFailure("a decoder said unencodable")
            default: break
            }
            precondition(!"\(error)".isEmpty)
            return
        }
        precondition(text.utf8.count <= limits.messageBytes)
        // Written again (it may be longer: \u0000 for a control byte,
        // 1000000000 for 1e9) and read back under room for that; depth and
        // entries stay.
        let written: String
        do throws(RoomProtocolError) {
            written = try message.json()
        } catch {
            // JSON text cannot hold a non-finite number, so none decoded.
            preconditionFailure("a decoded message did not encode: \(error)")
        }
        var again = limits
        again.messageBytes = 8 * text.utf8.count + 64
        do throws(RoomProtocolError) {
            let read = try Message(json: written, limits: again)
            precondition(read == message, "round trip differs: \(written)")
        } catch {
            preconditionFailure("what we wrote does not read back: \(error): \(written)")
        }
    }
}

/// The two directions' messages, for the one check above.
private protocol RoomProtocolMessage: Equatable {
    init(json text: String, limits: RoomProtocolLimits) throws(RoomProtocolError)
    func json() throws(RoomProtocolError) -> String
}

extension ClientMessage: RoomProtocolMessage {}

extension ServerMessage: RoomProtocolMessage {}
