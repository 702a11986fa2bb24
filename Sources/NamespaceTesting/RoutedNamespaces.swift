import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A router namespace and a few leaf namespaces, each leaf joined to the
/// router by its own veth pair: leaf k (from 0) holds 10.79.(k+1).2/24 with
/// a default route through the router's end, 10.79.(k+1).1. The router
/// forwards between leaves (`net.ipv4.ip_forward` set inside the router
/// namespace only; the machine's own namespace is not touched), so
/// leaf-to-leaf traffic is forwarded by the router while a process in the
/// router namespace reaches every leaf directly: an impairment of what
/// the router forwards (`impairForwardedUDP`) hits the links between
/// leaves and nothing else. Nothing leaves these namespaces. Names carry
/// the pid and a random suffix; `delete()` (call it on every path, after
/// stopping what runs inside) stops the impairment and removes the
/// namespaces, their veth pairs and routes with them.
package final class RoutedNamespaces {
    package struct Unavailable: Error, CustomStringConvertible { package let description: String }

    package let router: String
    package let leaves: [String]
    private var impairment: SeededImpairment?

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

    /// Sends the UDP the router forwards from one leaf to another through
    /// a `SeededImpairment` (a TUN device in the router namespace, policy
    /// routing: one rule per pair of leaves, table 100 to the TUN; what
    /// comes back out of the TUN is routed on by the main table): seeded
    /// loss and delay on the links between leaves only, while the router's
    /// own traffic with each leaf, and TCP between leaves, pass untouched.
    /// Stopped by `delete()`. Deletes every namespace and throws if a step
    /// fails.
    package func impairForwardedUDP(
        seed: UInt64, lossPerMille: Int, delay: Duration, jitter: Duration
    ) throws(Unavailable) -> SeededImpairment {
        let device = "swimp"
        let impairment: SeededImpairment
        do {
            impairment = try SeededImpairment(
                namespace: router, device: device, seed: seed, lossPerMille: lossPerMille, delay: delay, jitter: jitter)
        } catch {
            delete()
            throw Unavailable(description: "the impairment's TUN device: \(error)")
        }
        self.impairment = impairment
        var steps: [[String]] = [
            ["-n", router, "link", "set", device, "up"],
            // What comes back out of the TUN has a leaf's source address;
            // strict reverse-path filtering (inherited from the machine's
            // namespace) would drop it. Inside the router namespace only.
            ["netns", "exec", router, "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0"],
            ["netns", "exec", router, "sysctl", "-qw", "net.ipv4.conf.\(device).rp_filter=0"],
            ["-n", router, "route", "add", "default", "dev", device, "table", "100"],
        ]
        for k in leaves.indices {
            for j in leaves.indices where j != k {
                steps.append([
                    "-n", router, "rule", "add", "pref", "100", "iif", "swr\(k)", "to", "\(address(j))/32", "ipproto", "udp",
                    "lookup", "100",
                ])
            }
        }
        for step in steps {
            if let failure = IPCommand.run(step) {
                delete()
                throw Unavailable(description: "ip \(step.joined(separator: " ")): \(failure)")
            }
        }
        return impairment
    }

    /// `ip netns exec NAMESPACE executable arguments...`, as a Process not
    /// yet run (`ip netns exec` execs it: the pid is the executable's).
    package func process(in namespace: String, _ executable: String, _ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ip", "netns", "exec", namespace, executable] + arguments
        return process
    }

    /// Stops the impairment and deletes every namespace (their veth pairs,
    /// rules and routes go with them). Processes still running inside keep a namespace alive,
    /// nameless, until they exit: stop them first.
    package func delete() {
        impairment?.stop()
        for leaf in leaves { _ = IPCommand.run(["netns", "del", leaf]) }
        _ = IPCommand.run(["netns", "del", router])
    }
}
