import Foundation
import HTTPClient
import NetIO
import Signaling
import Wire

/// `swiftlet rooms ...` and `swiftlet participants ...`: the server API
/// (docs/API.md) from the command line, in the style of `lk room list`.
/// Each call signs its own admin token for every room (`*`), valid
/// five minutes, with the API key it is given.
enum APICommand {
    struct Options: Equatable {
        var url = "http://127.0.0.1:8080"
        var key = ""
        var secret = ""
        var dev = false
        var mode: String?
        var maxParticipants: Int?
        var emptyTimeoutSeconds: Double?
        var metadata: String?
        var unmute = false
        var json = false
    }

    static let parser = OptionParser<Options>(command: "swiftlet rooms|participants", specs: table)

    static let table: [OptionSpec<Options>] = [
        OptionSpec(
            key: "url", flag: "--url", environment: "SWIFTLET_URL", kind: .value(placeholder: "URL", json: .string),
            expects: "http://HOST[:PORT]", defaultText: "http://127.0.0.1:8080", help: "the server's HTTP port",
            example: "--url http://10.0.0.5:8080",
            set: { o, v in
                guard PlainHTTPURL(v) != nil else { return false }
                o.url = v
                return true
            }),
        OptionSpec(
            key: "api-key", flag: "--api-key", environment: "SWIFTLET_API_KEY",
            kind: .value(placeholder: "KEY", json: .string), expects: "an API key name", defaultText: "none",
            help: "the API key that signs the admin token",
            set: { o, v in
                o.key = v
                return !v.isEmpty
            }),
        OptionSpec(
            key: "api-secret", flag: "--api-secret", environment: "SWIFTLET_API_SECRET",
            kind: .value(placeholder: "SECRET", json: .string), expects: "the API key's secret", defaultText: "none",
            help: "its secret (prefer SWIFTLET_API_SECRET: flags show in ps)", secret: true,
            set: { o, v in
                o.secret = v
                return !v.isEmpty
            }),
        OptionSpec(
            key: "dev", flag: "--dev", kind: .toggle, expects: "true or false", defaultText: "off",
            help: "use the development key of swiftlet serve --dev",
            set: { o, v in
                o.dev = v == "true"
                return true
            }),
        OptionSpec(
            key: "mode", flag: "--mode", kind: .value(placeholder: "sfu|mesh", json: .string), expects: "sfu or mesh",
            defaultText: "sfu", help: "rooms create: the room's mode",
            set: { o, v in
                o.mode = v
                return v == "sfu" || v == "mesh"
            }),
        OptionSpec(
            key: "max-participants", flag: "--max-participants", kind: .value(placeholder: "N", json: .integer),
            expects: "a count from 1", defaultText: "the server's limit", help: "rooms create: members at most",
            set: { o, v in
                guard let n = Int(v), n >= 1 else { return false }
                o.maxParticipants = n
                return true
            }),
        OptionSpec(
            key: "empty-timeout", flag: "--empty-timeout", kind: .value(placeholder: "D", json: .duration),
            expects: "a duration (30s, 5m)", defaultText: "5m",
            help: "rooms create: how long the room waits empty before it closes",
            set: { o, v in
                guard let d = Duration(parsing: v), d >= .zero else { return false }
                o.emptyTimeoutSeconds = d.inSeconds
                return true
            }),
        OptionSpec(
            key: "metadata", flag: "--metadata", kind: .value(placeholder: "TEXT", json: .string),
            expects: "text (JSON, say)", defaultText: "none",
            help: "rooms create/update, participants update: the metadata to set",
            set: { o, v in
                o.metadata = v
                return true
            }),
        OptionSpec(
            key: "unmute", flag: "--unmute", kind: .toggle, expects: "true or false", defaultText: "off",
            help: "participants mute: unmute instead",
            set: { o, v in
                o.unmute = v == "true"
                return true
            }),
        OptionSpec(
            key: "json", flag: "--json", kind: .toggle, expects: "true or false", defaultText: "off",
            help: "print the API's JSON instead of a table",
            set: { o, v in
                o.json = v == "true"
                return true
            }),
    ]

    /// One API request: method, path under the server, JSON body.
    struct Request: Equatable {
        var method: String
        var path: String
        var body: String?
        /// How to print a 2xx answer: a table of rooms or participants, or the JSON.
        var table: Table = .none
        enum Table: Equatable { case none, rooms, participants }
    }

    /// The request for `noun verb positionals...`, or a usage error.
    static func request(_ noun: String, _ verb: String, _ args: [String], _ o: Options) throws(UsageError) -> Request {
        func need(_ n: Int, _ usage: String) throws(UsageError) {
            guard args.count == n else { throw UsageError("usage: swiftlet \(noun) \(verb) \(usage)") }
        }
        func seg(_ s: String) -> String { percentEncoded(s) }
        func json(_ fields: [String: Any]) -> String {
            let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }
        switch (noun, verb) {
        case ("rooms", "list"):
            try need(0, "")
            return Request(method: "GET", path: "/api/v1/rooms", table: .rooms)
        case ("rooms", "create"):
            try need(1, "NAME [--mode sfu|mesh] [--max-participants N] [--empty-timeout D] [--metadata TEXT]")
            var fields: [String: Any] = ["name": args[0]]
            if let m = o.mode { fields["mode"] = m }
            if let n = o.maxParticipants { fields["maxParticipants"] = n }
            if let t = o.emptyTimeoutSeconds { fields["emptyTimeout"] = t }
            if let m = o.metadata { fields["metadata"] = m }
            return Request(method: "POST", path: "/api/v1/rooms", body: json(fields))
        case ("rooms", "get"):
            try need(1, "NAME")
            return Request(method: "GET", path: "/api/v1/rooms/\(seg(args[0]))")
        case ("rooms", "update"):
            try need(1, "NAME --metadata TEXT")
            guard let m = o.metadata else { throw UsageError("rooms update needs --metadata TEXT") }
            return Request(method: "PATCH", path: "/api/v1/rooms/\(seg(args[0]))", body: json(["metadata": m]))
        case ("rooms", "close"):
            try need(1, "NAME")
            return Request(method: "DELETE", path: "/api/v1/rooms/\(seg(args[0]))")
        case ("participants", "list"):
            try need(1, "ROOM")
            return Request(method: "GET", path: "/api/v1/rooms/\(seg(args[0]))/participants", table: .participants)
        case ("participants", "get"):
            try need(2, "ROOM IDENTITY")
            return Request(method: "GET", path: "/api/v1/rooms/\(seg(args[0]))/participants/\(seg(args[1]))")
        case ("participants", "remove"):
            try need(2, "ROOM IDENTITY")
            return Request(method: "DELETE", path: "/api/v1/rooms/\(seg(args[0]))/participants/\(seg(args[1]))")
        case ("participants", "update"):
            try need(2, "ROOM IDENTITY --metadata TEXT")
            guard let m = o.metadata else { throw UsageError("participants update needs --metadata TEXT") }
            return Request(
                method: "PATCH", path: "/api/v1/rooms/\(seg(args[0]))/participants/\(seg(args[1]))",
                body: json(["metadata": m]))
        case ("participants", "mute"):
            try need(3, "ROOM IDENTITY TRACK_ID [--unmute]")
            return Request(
                method: "POST", path: "/api/v1/rooms/\(seg(args[0]))/participants/\(seg(args[1]))/tracks/\(seg(args[2]))/mute",
                body: json(["muted": !o.unmute]))
        default:
            let verbs = noun == "rooms" ? "list, create, get, update, close" : "list, get, remove, mute, update"
            throw UsageError("swiftlet \(noun): unknown action '\(verb)'; the actions are \(verbs)")
        }
    }

    static func run(_ noun: String, _ arguments: [String]) -> Int32 {
        guard let verb = arguments.first, verb != "--help", verb != "-h" else {
            print(Help.text(for: noun) ?? "")
            return arguments.isEmpty ? 64 : 0
        }
        let rest = arguments.dropFirst()
        let positionals = Array(rest.prefix { !$0.hasPrefix("--") })
        let flags = Array(rest.dropFirst(positionals.count))
        do {
            let parsed = try parser.parse(
                flags, environment: ProcessInfo.processInfo.environment, defaults: Options(), readFile: { _ in [] })
            if parsed.helpRequested {
                print(Help.text(for: noun) ?? "")
                return 0
            }
            var o = parsed.options
            if o.dev {
                o.key = ServeOptions.devKey
                o.secret = ServeOptions.devSecret
            }
            guard !o.key.isEmpty, !o.secret.isEmpty else {
                throw UsageError("give --dev, or --api-key and --api-secret (or SWIFTLET_API_KEY and SWIFTLET_API_SECRET)")
            }
            let request = try request(noun, verb, positionals, o)
            return perform(request, o)
        } catch {
            FileHandleStderr.write("swiftlet \(noun): \(error)\n")
            return 64
        }
    }

    static func adminToken(_ o: Options, nowSeconds: Int64) -> String {
        AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: o.key, subject: "swiftlet-cli", notBefore: nowSeconds - 5, expiresAt: nowSeconds + 300, room: "*",
                grants: AccessTokenGrants(admin: true)),
            secret: o.secret)
    }

    /// Sends `request`; prints the answer. 0 on 2xx, 1 on an API error
    /// (its code and message on stderr), 69 when the server is not reached.
    static func perform(_ request: Request, _ o: Options) -> Int32 {
        guard let url = PlainHTTPURL(o.url), let endpoint = url.endpoint() else {
            FileHandleStderr.write("swiftlet: cannot resolve \(o.url)\n")
            return 69
        }
        var headers = [("Authorization", "Bearer \(adminToken(o, nowSeconds: Int64(Date().timeIntervalSince1970)))")]
        if request.body != nil { headers.append(("Content-Type", "application/json")) }
        let exchange: HTTPExchange
        do {
            exchange = try HTTPExchange(
                to: endpoint, method: request.method, path: request.path, headers: headers, body: Array((request.body ?? "").utf8)
            )
        } catch {
            FileHandleStderr.write("swiftlet: cannot connect to \(o.url): \(error)\n")
            return 69
        }
        defer { exchange.stream.shutdown() }
        switch exchange.run(until: MonotonicClock.now() + .seconds(10)) {
        case .failed(let why):
            FileHandleStderr.write("swiftlet: \(o.url): \(why)\n")
            return 69
        case .response(let head, let body):
            let text = String(decoding: body, as: UTF8.self)
            guard (200..<300).contains(head.status) else {
                let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
                let code = object?["code"] as? String ?? "http_\(head.status)"
                FileHandleStderr.write("swiftlet: \(head.status) \(code): \(object?["message"] as? String ?? text)\n")
                return 1
            }
            print(o.json || request.table == .none ? text : table(request.table, body) ?? text)
            return 0
        }
    }

    /// Rows of names and counts, as `lk room list` prints.
    static func table(_ kind: Request.Table, _ body: [UInt8]) -> String? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else { return nil }
        var rows: [[String]]
        switch kind {
        case .rooms:
            guard let rooms = object["rooms"] as? [[String: Any]] else { return nil }
            rows = [["NAME", "MODE", "PARTICIPANTS", "TRACKS", "MAX", "METADATA"]]
            for r in rooms {
                rows.append([
                    "\(r["name"] ?? "")", "\(r["mode"] ?? "")", "\(r["participants"] ?? 0)", "\(r["tracks"] ?? 0)",
                    r["maxParticipants"].map { "\($0)" } ?? "-", "\(r["metadata"] ?? "")",
                ])
            }
        case .participants:
            guard let list = object["participants"] as? [[String: Any]] else { return nil }
            rows = [["IDENTITY", "ID", "KIND", "TRACKS", "METADATA"]]
            for p in list {
                let tracks = (p["tracks"] as? [[String: Any]] ?? []).map {
                    "\($0["id"] ?? "")(\($0["kind"] ?? "")\(($0["muted"] as? Bool) == true ? ",muted" : ""))"
                }
                rows.append([
                    "\(p["identity"] ?? "")", "\(p["id"] ?? "")", "\(p["kind"] ?? "")",
                    tracks.isEmpty ? "-" : tracks.joined(separator: " "), "\(p["metadata"] ?? "")",
                ])
            }
        case .none:
            return nil
        }
        let widths = rows[0].indices.map { i in rows.map { $0[i].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell.padding(toLength: widths[i] + 2, withPad: " ", startingAt: 0)
            }
            .joined()
        }.joined(separator: "\n")
    }

    /// RFC 3986 unreserved characters stay; everything else is escaped.
    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
