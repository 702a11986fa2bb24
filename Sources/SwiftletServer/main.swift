#if canImport(Glibc)
    import Glibc
#endif

let usage = """
    swiftlet: a WebRTC selective forwarding unit

    USAGE:
      swiftlet serve [--config FILE] [--http HOST:PORT] [--udp-port PORT] [--workers N] [--media-bind IP] [--announce-ip IP]
                     [--drain-seconds S] [--tls-cert FILE --tls-key FILE] [--https HOST:PORT] [--dev [--tls]]
      swiftlet token --room R --identity I [--publish] [--subscribe] [--admin] [--ttl 1h] [--dev | --key K --secret S]
      swiftlet --help | --version

    COMMANDS:
      serve    run the server (see docs/ for what is built so far)
      token    print an access token for a participant

    OPTIONS:
      -h, --help     show this help
      --version      show the version
    """

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(arguments.isEmpty ? 64 : 0)
}
if arguments.first == "--version" {
    print("swiftlet \(SwiftletVersion.string)")
    exit(0)
}
switch arguments.first {
case "serve":
    exit(ServeCommand.run(Array(arguments.dropFirst())))
case "token":
    exit(TokenCommand.run(Array(arguments.dropFirst())))
default:
    FileHandleStderr.write("swiftlet: unknown command '\(arguments[0])'; see swiftlet --help\n")
    exit(64)
}
