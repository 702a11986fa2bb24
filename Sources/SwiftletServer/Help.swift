/// The help of `swiftlet` and of each command, built from the option
/// tables so that every flag, its default and an example appear.
enum Help {
    static let commands: [(name: String, summary: String)] = [
        ("serve", "run the server: rooms over WebSocket, WHIP and WHEP, media on UDP"),
        ("token", "print an access token for a participant"),
        ("rooms", "list, create, get, update or close rooms through the server API"),
        ("participants", "list, get, remove, mute or update participants through the server API"),
        ("help", "show the help of a command: swiftlet help serve"),
        ("version", "show the version (also --version)"),
    ]

    static var commandList: String { commands.map(\.name).joined(separator: ", ") }

    static var global: String {
        var out = """
            swiftlet \(SwiftletVersion.string): a WebRTC selective forwarding unit

            USAGE:
              swiftlet COMMAND [options]
              swiftlet help COMMAND | swiftlet COMMAND --help
              swiftlet --version

            COMMANDS:

            """
        for c in commands { out += "  \(c.name.padding(8))\(c.summary)\n" }
        out += """

            EXAMPLES:
              swiftlet serve --dev
              swiftlet serve --config /etc/swiftlet.json --log-format json
              swiftlet token --dev --room demo --identity alice --ttl 1h
              swiftlet rooms list --dev

            Options come from flags, SWIFTLET_* environment variables and a JSON
            config file, in that order of precedence (docs/CONFIGURATION.md).
            """
        return out
    }

    static func text(for command: String) -> String? {
        switch command {
        case "serve":
            """
            swiftlet serve: run the server until SIGTERM or SIGINT (which drain first)

            USAGE:
              swiftlet serve [--config FILE] [options]

            Precedence: flag, then SWIFTLET_* environment variable, then config file,
            then default. Flags take --flag VALUE or --flag=VALUE. Durations take a
            unit: 500ms, 30s, 5m, 1h, 2d (a bare number is seconds).

            OPTIONS:
            \(ServeOptions.parser.helpText())
            EXAMPLES:
              swiftlet serve --dev
              SWIFTLET_KEYS=prod:$(cat /etc/swiftlet.secret) swiftlet serve --http 0.0.0.0:8080
              swiftlet serve --config swiftlet.json --workers=4 --log-level warning

            EXIT STATUS: 0 drained and stopped, 130/143 a second SIGINT/SIGTERM cut the
            drain short, 64 bad options, 66 unreadable TLS certificate or key,
            70 internal error, 71 cannot bind a port or nothing to announce.
            """
        case "token":
            """
            swiftlet token: print an HS256 access token (docs/TOKENS.md)

            USAGE:
              swiftlet token --room ROOM --identity NAME [--publish] [--subscribe] [--admin]
                             [--ttl DURATION] (--dev | --key KEY --secret SECRET)

            OPTIONS:
            \(TokenCommand.parser.helpText())
            EXAMPLES:
              swiftlet token --dev --room demo --identity alice
              SWIFTLET_API_KEY=prod SWIFTLET_API_SECRET=... swiftlet token --room demo --identity bob --publish --ttl 15m

            EXIT STATUS: 0 printed, 64 bad options.
            """
        case "rooms", "participants":
            """
            swiftlet rooms|participants: the server API (docs/API.md); each call signs
            a five-minute admin token for every room with the API key given

            USAGE:
              swiftlet rooms list
              swiftlet rooms create NAME [--mode sfu|mesh] [--max-participants N]
                                         [--empty-timeout D] [--metadata TEXT]
              swiftlet rooms get|close NAME
              swiftlet rooms update NAME --metadata TEXT
              swiftlet participants list ROOM
              swiftlet participants get|remove ROOM IDENTITY
              swiftlet participants mute ROOM IDENTITY TRACK_ID [--unmute]
              swiftlet participants update ROOM IDENTITY --metadata TEXT
              (names first, then options; plus --url, and --dev or --api-key/--api-secret)

            OPTIONS:
            \(APICommand.parser.helpText())
            EXAMPLES:
              swiftlet rooms list --dev
              SWIFTLET_API_KEY=prod SWIFTLET_API_SECRET=... swiftlet rooms create standup --max-participants 10 --url http://10.0.0.5:8080
              swiftlet participants remove standup alice --dev

            EXIT STATUS: 0 done, 1 the API refused (its code and message on stderr),
            64 bad options, 69 the server was not reached.
            """
        case "help": "swiftlet help [COMMAND]: show the help of swiftlet or of a command (\(commandList))"
        case "version": "swiftlet version: show the version (also swiftlet --version)"
        default: nil
        }
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
}
