#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case nil:
    FileHandleStderr.write(Help.global + "\n")
    exit(64)
case "--help", "-h":
    print(Help.global)
    exit(0)
case "help":
    // `swiftlet help` or `swiftlet help CMD`.
    guard arguments.count <= 2 else {
        FileHandleStderr.write("swiftlet help: expected at most one command, got \(arguments.count - 1)\n")
        exit(64)
    }
    guard let name = arguments.dropFirst().first else {
        print(Help.global)
        exit(0)
    }
    guard let text = Help.text(for: name) else {
        FileHandleStderr.write("swiftlet help: unknown command '\(name)'; the commands are \(Help.commandList)\n")
        exit(64)
    }
    print(text)
    exit(0)
case "--version", "version":
    print("swiftlet \(SwiftletVersion.string)")
    exit(0)
case "serve":
    exit(ServeCommand.run(Array(arguments.dropFirst())))
case "token":
    exit(TokenCommand.run(Array(arguments.dropFirst())))
case "rooms", "participants":
    exit(APICommand.run(arguments[0], Array(arguments.dropFirst())))
default:
    let suggestion = String.suggestion(Help.commands.map(\.name).nearest(to: arguments[0]) { $0 })
    FileHandleStderr.write(
        "swiftlet: unknown command '\(arguments[0])'\(suggestion); the commands are \(Help.commandList); "
            + "see swiftlet --help\n")
    exit(64)
}
