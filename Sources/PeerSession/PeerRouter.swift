import STUN
import Wire

/// Hands each datagram arriving on a worker's shared UDP port to the
/// transport it belongs to. Every peer of a worker shares one port (RFC
/// 8445 section 5.1.1 allows it; DESIGN: one port per worker), so the only
/// keys are the datagram's source address and, for a first contact, the
/// local ufrag in a STUN check's USERNAME ("<our ufrag>:<their ufrag>",
/// RFC 8445 section 7.3).
///
/// An address is bound to a transport only after that transport validated
/// it (a check with the right credentials), so a spoofed or stray datagram
/// can reach at most the ICE agent it claims, which rejects it. One
/// address belongs to one transport: a peer that reuses an address (NAT
/// rebinding to another participant) takes it over only by passing a
/// check.
package struct PeerRouter<Key: Hashable> {
    package struct Counters: Equatable, Sendable {
        /// Not STUN, from an address no transport validated.
        package var unroutable = 0
        /// STUN whose USERNAME names no local ufrag we know.
        package var unknownUfrag = 0
        package init() {}
    }

    private var byUfrag: [String: Key] = [:]
    private var byAddress: [TransportAddress: Key] = [:]
    /// Bound addresses per transport, oldest first.
    private var addressesOf: [Key: [TransportAddress]] = [:]
    package private(set) var counters = Counters()
    /// At most this many addresses per transport (ICE itself bounds its
    /// learned addresses; this keeps the table bounded even so).
    package let maxAddressesPerTransport: Int

    package init(maxAddressesPerTransport: Int = 16) {
        self.maxAddressesPerTransport = maxAddressesPerTransport
    }

    /// A transport waiting for checks addressed to `localUfrag`.
    package mutating func register(_ key: Key, localUfrag: String) {
        byUfrag[localUfrag] = key
        addressesOf[key, default: []] = addressesOf[key] ?? []
    }

    /// Forgets a transport and every address bound to it.
    package mutating func remove(_ key: Key) {
        byUfrag = byUfrag.filter { $0.value != key }
        for address in addressesOf.removeValue(forKey: key) ?? [] where byAddress[address] == key {
            byAddress[address] = nil
        }
    }

    /// Which transport should see this datagram; nil drops it. Cheap for
    /// known addresses (one hash lookup); a first contact parses STUN.
    package mutating func route(_ datagram: UnsafeRawBufferPointer, from source: TransportAddress) -> Key? {
        if let key = byAddress[source] {
            // A check from a bound address may still be for another
            // transport (its ufrag says so): let STUN decide then.
            if DatagramKind.classify(datagram) == .stun, let other = ufragOwner(datagram), other != key { return other }
            return key
        }
        guard DatagramKind.classify(datagram) == .stun else {
            counters.unroutable += 1
            return nil
        }
        guard let key = ufragOwner(datagram) else {
            counters.unknownUfrag += 1
            return nil
        }
        return key
    }

    /// After the transport handled a datagram from `source`: binds the
    /// address to it if the transport now trusts it.
    package mutating func noteValidated(_ source: TransportAddress, by key: Key) {
        guard byAddress[source] != key else { return }
        if let previous = byAddress[source] { addressesOf[previous]?.removeAll { $0 == source } }
        var addresses = addressesOf[key] ?? []
        // Over the bound, the address validated longest ago goes: a peer's
        // current address is its most recently validated one.
        if addresses.count >= maxAddressesPerTransport {
            let evict = addresses.removeFirst()
            byAddress[evict] = nil
        }
        addresses.append(source)
        addressesOf[key] = addresses
        byAddress[source] = key
    }

    /// The transport `address` is bound to (one that validated it), if any.
    package func owner(of address: TransportAddress) -> Key? { byAddress[address] }

    package var transportCount: Int { addressesOf.count }
    package func boundAddresses(of key: Key) -> [TransportAddress] { addressesOf[key] ?? [] }

    private func ufragOwner(_ datagram: UnsafeRawBufferPointer) -> Key? {
        guard let message = try? STUNMessage.parse(RawSpan(_unsafeBytes: datagram)),
            message.type == .bindingRequest, let username = message.username,
            let colon = username.firstIndex(of: ":")
        else { return nil }
        return byUfrag[String(username[..<colon])]
    }
}
