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

    /// Local ufrags by a hash of their bytes, so that a check's USERNAME is
    /// looked up in place, without making a String (issue #14): one hash
    /// and one short bucket per check, O(1) however many transports a
    /// worker holds. A bucket lists every ufrag with that hash, compared
    /// byte for byte, so a collision costs a comparison, never a wrong
    /// owner. The buckets hold no `Key`: code generic over `Key` is not
    /// specialized across modules, and walking an array of generic tuples
    /// there allocated a coroutine frame per element read.
    private var ufrags: [Int: [RegisteredUfrag]] = [:]
    /// The transport of each `RegisteredUfrag.id`.
    private var ufragOwners: [Int: Key] = [:]
    private var nextUfragID = 0
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
        let ufrag = Array(localUfrag.utf8)
        let hash = ufrag.withUnsafeBytes { Self.hash($0) }
        if let existing = ufrags[hash]?.first(where: { $0.ufrag == ufrag }) {
            ufragOwners[existing.id] = key
        } else {
            nextUfragID += 1
            ufrags[hash, default: []].append(RegisteredUfrag(ufrag: ufrag, id: nextUfragID))
            ufragOwners[nextUfragID] = key
        }
        addressesOf[key, default: []] = addressesOf[key] ?? []
    }

    /// Forgets a transport and every address bound to it.
    package mutating func remove(_ key: Key) {
        let gone = Set(ufragOwners.filter { $0.value == key }.keys)
        if !gone.isEmpty {
            for id in gone { ufragOwners[id] = nil }
            for (hash, bucket) in ufrags where bucket.contains(where: { gone.contains($0.id) }) {
                let kept = bucket.filter { !gone.contains($0.id) }
                ufrags[hash] = kept.isEmpty ? nil : kept
            }
        }
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

    /// Binds `address` to `key` before any check: for a transport whose
    /// peer's address comes from a trusted control plane (a relay to
    /// another node of the cluster, whose address is in its record), and
    /// whose answers (STUN responses, DTLS, SRTP) carry no ufrag to route
    /// by. What arrives from there still has to pass that transport's ICE
    /// and DTLS checks.
    package mutating func bind(_ address: TransportAddress, to key: Key) { noteValidated(address, by: key) }

    /// The transport `address` is bound to (one that validated it), if any.
    package func owner(of address: TransportAddress) -> Key? { byAddress[address] }

    package var transportCount: Int { addressesOf.count }
    package func boundAddresses(of key: Key) -> [TransportAddress] { addressesOf[key] ?? [] }

    /// The transport whose local ufrag is the part of a Binding request's
    /// USERNAME before the colon (RFC 8445 section 7.3), read in place.
    private func ufragOwner(_ datagram: UnsafeRawBufferPointer) -> Key? {
        let bytes = RawSpan(_unsafeBytes: datagram)
        guard let message = try? STUNMessageView(bytes), message.type == .bindingRequest else { return nil }
        let owner = message.withUsername(in: bytes) { username -> Key? in
            guard let colon = username.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            let ufrag = UnsafeRawBufferPointer(rebasing: username[..<colon])
            guard let entry = ufrags[Self.hash(ufrag)]?.first(where: { $0.ufrag.elementsEqual(ufrag) }) else { return nil }
            return ufragOwners[entry.id]
        }
        return owner ?? nil
    }

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return hasher.finalize()
    }
}

/// A local ufrag's bytes and the id `PeerRouter` keeps its owner under; not
/// nested in the generic router, so the lookup's code is concrete.
private struct RegisteredUfrag {
    var ufrag: [UInt8]
    var id: Int
}
