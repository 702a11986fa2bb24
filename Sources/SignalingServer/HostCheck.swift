import NetIO
import Signaling
import Synchronization

/// DNS rebinding protection for dev mode. A dev server listens on
/// loopback and mints tokens for anyone who asks (`/dev/token`); a web page
/// from another site whose name the attacker re-points at 127.0.0.1 would
/// reach it as same-origin. The browser still says which name it asked
/// for: every request's `Host` (RFC 9110 section 7.2) must be a loopback
/// name the server serves (`localhost`, `127.0.0.1`, `[::1]`, or a bound
/// address, with a listener's port), else 421 Misdirected Request (RFC
/// 9110 section 15.5.20). A page of another origin that calls the room
/// WebSocket or `/dev/token` directly (cross-site WebSocket hijacking:
/// browsers send `Origin` there, RFC 6455 section 10.2) gets 403. A request
/// without `Origin` is not a browser's cross-origin one and passes.
///
/// In production Host is not checked (the server is reached under names
/// it cannot know), and Origin only against `--allowed-origins` when set:
/// an access token is a bearer credential a foreign page cannot obtain
/// without the application's backend (docs/SECURITY.md).
struct HostCheck: Sendable, Equatable {
    /// Accepted `Host` values, lower-cased; nil: any.
    var hosts: Set<String>?
    /// Accepted `Origin` values (`scheme://host[:port]`), lower-cased; nil: any.
    var origins: Set<String>?

    static let any = HostCheck(hosts: nil, origins: nil)

    /// Dev mode: the loopback names with each listener's port, and the
    /// listeners' own addresses.
    static func loopback(http: SocketAddress, https: SocketAddress?) -> HostCheck {
        var hosts: Set<String> = []
        var origins: Set<String> = []
        for (address, scheme, defaultPort) in [(http, "http", 80)] + (https.map { [($0, "https", 443)] } ?? []) {
            var names = ["localhost", "127.0.0.1", "[::1]"]
            let own = address.description
            names.append(String(own[..<(own.lastIndex(of: ":") ?? own.endIndex)]))
            for name in names {
                var forms = ["\(name):\(address.port)"]
                if Int(address.port) == defaultPort { forms.append(name) }
                for host in forms {
                    hosts.insert(host.lowercased())
                    origins.insert("\(scheme)://\(host)".lowercased())
                }
            }
        }
        return HostCheck(hosts: hosts, origins: origins)
    }

    /// The refusal of `request`, or nil when it may proceed.
    func refusal(for request: HTTPRequest) -> HTTPResponse? {
        if let hosts {
            let host = request.headers["Host"]?.trimmingSpaces.lowercased() ?? ""
            guard hosts.contains(host) else {
                return HTTPSessionRoutes.text(
                    421, "Host '\(host)' is not a name this dev server serves (DNS rebinding protection): use localhost")
            }
        }
        if let origins, request.path == "/rtc" || request.path == DevTokenIssuer.path,
            let origin = request.headers["Origin"]?.trimmingSpaces.lowercased(), !origins.contains(origin)
        {
            return HTTPSessionRoutes.text(403, "Origin '\(origin)' may not use \(request.path) on this server")
        }
        return nil
    }
}

/// Set once the listeners are bound (their ports are known only then).
final class HostCheckSlot: Sendable {
    let value = Mutex<HostCheck>(.any)
}
