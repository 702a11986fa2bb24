#if canImport(Glibc)
    import Glibc
#endif

let usage = """
    roombot: a headless WebRTC client that joins Swiftlet rooms in numbers

    USAGE:
      roombot --url URL (--room NAME | --rooms N) [--publishers N] [--subscribers N]
              [--audio-only] [--simulcast | --no-simulcast] [--duration SECONDS] [--ramp PER_SECOND]
              [--dev | --key K --secret S] [--json FILE]
              [--max-loss PERCENT] [--max-join-ms MS] [--max-delay-ms MS] [--min-bitrate KBPS]
      roombot --help

    OPTIONS:
      -h, --help     show this help
    """

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(arguments.isEmpty ? 64 : 0)
}
var message = "roombot: the client is not built yet (see docs/ROADMAP.md)\n"
message.withUTF8 { p in _ = write(2, p.baseAddress, p.count) }
exit(69)
