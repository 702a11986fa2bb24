import Foundation
import NetIO

#if canImport(Glibc)
    import Glibc
#endif

/// Two network namespaces joined by a veth pair, each end holding the
/// addresses a test asks for: a multihomed server and its clients without
/// touching the machine's own interfaces. Made by one test and deleted by
/// it (`delete()`, also on failure paths); the names carry the process id
/// and a random suffix so parallel runs do not collide.
package final class VethNamespaces {
    package struct Unavailable: Error, CustomStringConvertible { package let description: String }

    package let server: String
    package let client: String
    /// The veth end in each namespace.
    package let serverLink: String
    package let clientLink: String

    /// Creates both namespaces, the veth pair, the addresses ("10.77.1.1/24",
    /// "fd00:77::1/64": IPv6 without duplicate address detection, so usable
    /// at once) and brings lo and the veth ends up. Throws `Unavailable`
    /// (after cleaning up) when `ip netns add` or any step fails: no root,
    /// or a kernel without namespaces or veth.
    package init(serverAddresses: [String], clientAddresses: [String]) throws(Unavailable) {
        let tag = "\(getpid() % 100_000)\(Int.random(in: 100...999))"
        server = "swl-s\(tag)"
        client = "swl-c\(tag)"
        serverLink = "swv\(tag)"
        clientLink = "swc\(tag)"
        var steps: [[String]] = [
            ["netns", "add", server], ["netns", "add", client],
            ["link", "add", serverLink, "netns", server, "type", "veth", "peer", "name", clientLink, "netns", client],
        ]
        for (ns, link, addresses) in [(server, serverLink, serverAddresses), (client, clientLink, clientAddresses)] {
            for a in addresses {
                steps.append(["-n", ns, "addr", "add", a, "dev", link] + (a.contains(":") ? ["nodad"] : []))
            }
            steps.append(["-n", ns, "link", "set", "lo", "up"])
            steps.append(["-n", ns, "link", "set", link, "up"])
        }
        for step in steps {
            if let failure = IPCommand.run(step) {
                delete()
                throw Unavailable(description: "ip \(step.joined(separator: " ")): \(failure)")
            }
        }
    }

    /// `ip -n NAMESPACE route add ROUTE...`; deletes both namespaces and
    /// throws if it fails.
    package func addRoute(in namespace: String, _ route: [String]) throws(Unavailable) {
        if let failure = IPCommand.run(["-n", namespace, "route", "add"] + route) {
            delete()
            throw Unavailable(description: "ip route add \(route.joined(separator: " ")): \(failure)")
        }
    }

    /// Deletes both namespaces (the veth pair goes with them). Sockets
    /// still open in them keep them alive until they close.
    package func delete() {
        _ = IPCommand.run(["netns", "del", server])
        _ = IPCommand.run(["netns", "del", client])
    }

    /// Runs `body` on a fresh thread that has entered namespace `name`
    /// (setns(2) moves only the calling thread). Sockets it opens belong to
    /// that namespace for good, whichever thread uses them afterwards.
    package func inside<T>(_ name: String, _ body: () throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            let work = Unchecked(body)
            let result = Unchecked<Result<T, any Error>?>(nil)
            let thread = WorkerThread {
                let fd = open("/run/netns/\(name)", O_RDONLY | O_CLOEXEC)
                defer { if fd >= 0 { close(fd) } }
                guard fd >= 0, NetworkNamespaceEntry.enter(fd) == 0 else {
                    result.value = .failure(Unavailable(description: "setns \(name): \(String(cString: strerror(errno)))"))
                    return
                }
                result.value = Result { try work.value() }
            }
            thread.join()
            return try result.value!.get()
        }
    }

}

/// Hands a value to and from the namespace thread, which is joined before
/// the value is read again.
private final class Unchecked<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
