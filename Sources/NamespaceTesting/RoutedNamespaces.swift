import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A router namespace and a few leaf namespaces, each leaf joined to the
/// router by its own veth pair: leaf k (from 0) holds 10.79.(k+1).2/24 with
/// a default route through the router's end, 10.79.(k+1).1. The router
/// forwards between leaves (`net.ipv4.ip_forward` set inside the router
/// namespace only; the machine's own namespace is not touched), so
/// leaf-to-leaf traffic crosses the router's forward hook while a process
/// in the router namespace reaches every leaf directly (its input and
/// output hooks): an impairment in the forward chain (`dropForwardedUDP`)
/// hits the links between leaves and nothing else. Nothing leaves these
/// namespaces. Names carry the pid and a random suffix; `delete()` (call it
/// on every path, after stopping what runs inside) removes them, their veth
/// pairs and nftables tables with them.
package final class RoutedNamespaces {
    package struct Unavailable: Error, CustomStringConvertible { package let description: String }

    package let router: String
    package let leaves: [String]
    private static let table = "swiftlet_impair"

    /// Throws `Unavailable` (after cleaning up) when a namespace, veth
    /// pair, address, route or the router's forwarding cannot be set: no
    /// root, or a kernel without namespaces or veth.
    package init(leaves count: Int) throws(Unavailable) {
        precondition((1...200).contains(count))
        let tag = "\(getpid() % 100_000)\(Int.random(in: 100...999))"
        router = "swl-r\(tag)"
        leaves = (0..<count).map { "swl-n\($0)-\(tag)" }
        var steps: [[String]] = [["netns", "add", router], ["-n", router, "link", "set", "lo", "up"]]
        for (k, leaf) in leaves.enumerated() {
            // Interface names: at most 15 bytes, each in its own namespace.
            let (outer, inner) = ("swr\(k)", "swn\(k)")
            steps += [
                ["netns", "add", leaf],
                ["-n", router, "link", "add", outer, "type", "veth", "peer", "name", inner, "netns", leaf],
                ["-n", router, "addr", "add", "\(routerAddress(k))/24", "dev", outer],
                ["-n", leaf, "addr", "add", "\(address(k))/24", "dev", inner],
                ["-n", router, "link", "set", outer, "up"],
                ["-n", leaf, "link", "set", "lo", "up"],
                ["-n", leaf, "link", "set", inner, "up"],
                ["-n", leaf, "route", "add", "default", "via", routerAddress(k), "dev", inner],
            ]
        }
        steps.append(["netns", "exec", router, "sysctl", "-qw", "net.ipv4.ip_forward=1"])
        for step in steps {
            if let failure = IPCommand.run(step) {
                delete()
                throw Unavailable(description: "ip \(step.joined(separator: " ")): \(failure)")
            }
        }
    }

    /// Leaf k's address.
    package func address(_ k: Int) -> String { "10.79.\(k + 1).2" }
    /// The router's address on leaf k's link.
    package func routerAddress(_ k: Int) -> String { "10.79.\(k + 1).1" }

    /// Drops about `perMille` in 1000 of the UDP datagrams the router
    /// forwards between leaves, at random (nftables `numgen random`: the
    /// kernel's generator, not seeded), and counts what it forwarded and
    /// dropped (`forwardedUDP`). Deletes every namespace and throws if
    /// nftables is missing or refuses.
    package func dropForwardedUDP(perMille: Int) throws(Unavailable) {
        precondition((0...1000).contains(perMille))
        let rules = """
            table inet \(Self.table) {
                counter udp_forwarded {}
                counter udp_dropped {}
                chain forward {
                    type filter hook forward priority 0; policy accept;
                    meta l4proto udp counter name "udp_forwarded"
                    meta l4proto udp numgen random mod 1000 < \(perMille) counter name "udp_dropped" drop
                }
            }
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(router).nft")
        defer { try? FileManager.default.removeItem(at: file) }
        let failure: String?
        do {
            try rules.write(to: file, atomically: true, encoding: .utf8)
            failure = IPCommand.run(["netns", "exec", router, "nft", "-f", file.path])
        } catch {
            failure = "\(error)"
        }
        if let failure {
            delete()
            throw Unavailable(description: "nft -f (drops in the router's forward chain): \(failure)")
        }
    }

    /// UDP datagrams the router forwarded between leaves (before the
    /// drop) and those it dropped, since `dropForwardedUDP`; nil if
    /// nftables does not answer.
    package func forwardedUDP() -> (forwarded: Int, dropped: Int)? {
        func packets(_ counter: String) -> Int? {
            let (ok, text) = IPCommand.capture(["netns", "exec", router, "nft", "list", "counter", "inet", Self.table, counter])
            guard ok, let range = text.range(of: "packets ") else { return nil }
            return Int(text[range.upperBound...].prefix { $0.isNumber })
        }
        guard let forwarded = packets("udp_forwarded"), let dropped = packets("udp_dropped") else { return nil }
        return (forwarded, dropped)
    }

    /// `ip netns exec NAMESPACE executable arguments...`, as a Process not
    /// yet run (`ip netns exec` execs it: the pid is the executable's).
    package func process(in namespace: String, _ executable: String, _ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ip", "netns", "exec", namespace, executable] + arguments
        return process
    }

    /// Deletes every namespace (their veth pairs and nftables tables go
    /// with them). Processes still running inside keep a namespace alive,
    /// nameless, until they exit: stop them first.
    package func delete() {
        for leaf in leaves { _ = IPCommand.run(["netns", "del", leaf]) }
        _ = IPCommand.run(["netns", "del", router])
    }
}
