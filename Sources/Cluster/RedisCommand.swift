import CHiredis

/// A command as Redis reads it: an array of bulk strings (RESP2), formatted
/// by hiredis's `redisFormatCommandArgv` (binary-safe: an argument may hold
/// any byte, CRLF included).
package enum RedisCommand {
    package static func encode(_ arguments: [String]) -> [UInt8] {
        encode(arguments.map { Array($0.utf8) })
    }

    package static func encode(_ arguments: [[UInt8]]) -> [UInt8] {
        guard !arguments.isEmpty else { return [] }
        // Stable copies the C call can read (an empty argument still needs
        // a valid pointer; its length says 0).
        let copies = arguments.map { bytes -> UnsafeMutableBufferPointer<CChar> in
            let copy = UnsafeMutableBufferPointer<CChar>.allocate(capacity: max(bytes.count, 1))
            for (i, b) in bytes.enumerated() { copy[i] = CChar(bitPattern: b) }
            return copy
        }
        defer { for c in copies { c.deallocate() } }
        var pointers = copies.map { UnsafePointer<CChar>($0.baseAddress) }
        let lengths = arguments.map(\.count)
        var target: UnsafeMutablePointer<CChar>?
        let n = lengths.withUnsafeBufferPointer { lens in
            pointers.withUnsafeMutableBufferPointer { p in
                redisFormatCommandArgv(&target, Int32(p.count), p.baseAddress, lens.baseAddress)
            }
        }
        guard n > 0, let target else { return [] }
        defer { redisFreeCommand(target) }
        return Array(UnsafeRawBufferPointer(start: target, count: Int(n)))
    }
}
