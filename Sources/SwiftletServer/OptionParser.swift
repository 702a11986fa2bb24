/// Reads a command's options from its table: defaults, then the config
/// file, then `SWIFTLET_*` environment variables, then flags, each later
/// source overriding the earlier (flag > environment > file > default).
/// No I/O of its own: the environment and the file reader are parameters.
struct OptionParser<Options>: Sendable {
    /// "swiftlet serve", for messages.
    var command: String
    var specs: [OptionSpec<Options>]
    /// The option naming the config file (`--config`, `SWIFTLET_CONFIG`),
    /// or nil when the command reads none.
    var configFlag: String? = nil
    var configEnvironment: String? = nil

    struct Result {
        var options: Options
        var sources: [String: OptionSource] = [:]
        var configPath: String?
        var helpRequested = false
    }

    func parse(
        _ arguments: [String], environment: [String: String], defaults: Options,
        readFile: (String) throws -> [UInt8]
    ) throws(UsageError) -> Result {
        var result = Result(options: defaults)
        // The command line first, to know the config file and --help; its
        // values are applied last.
        var flags: [(spec: OptionSpec<Options>, name: String, value: String)] = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if argument == "--help" || argument == "-h" {
                result.helpRequested = true
                continue
            }
            guard argument.hasPrefix("--") else {
                throw UsageError("unexpected argument '\(argument)'; options start with --; see \(command) --help")
            }
            let (name, inline) = Self.split(argument)
            if let configFlag, name == configFlag {
                guard let path = inline ?? (i < arguments.count ? arguments[i] : nil), !path.isEmpty else {
                    throw UsageError("\(configFlag) needs a value: the path of a JSON config file")
                }
                if inline == nil { i += 1 }
                result.configPath = path
                continue
            }
            guard let spec = specs.first(where: { $0.flag == name }) else {
                let known = specs.compactMap(\.flag) + (configFlag.map { [$0] } ?? []) + ["--help"]
                throw UsageError(
                    "unknown option '\(name)'\(String.suggestion(known.nearest(to: name) { $0 })); see \(command) --help")
            }
            switch spec.kind {
            case .toggle:
                guard let value = Self.boolean(inline ?? "true") else {
                    throw UsageError("\(name) is a switch: give it alone, or as \(name)=true or \(name)=false")
                }
                flags.append((spec, name, value))
            case .value(let placeholder, _):
                if let inline {
                    flags.append((spec, name, inline))
                } else {
                    guard i < arguments.count, !arguments[i].hasPrefix("--") || arguments[i].count == 2 else {
                        throw UsageError("\(name) needs a value: \(name) \(placeholder) (\(spec.expects))")
                    }
                    flags.append((spec, name, arguments[i]))
                    i += 1
                }
            case .map:
                throw UsageError("\(name) is not a command-line option")
            }
        }
        if result.helpRequested { return result }

        if result.configPath == nil, let configEnvironment, let path = environment[configEnvironment], !path.isEmpty {
            result.configPath = path
        }
        if let path = result.configPath {
            let bytes: [UInt8]
            do { bytes = try readFile(path) } catch { throw UsageError("config file \(path): cannot read it: \(error)") }
            let root: ConfigJSON.Value
            do { root = try ConfigJSON.parse(bytes) } catch {
                throw UsageError("config file \(path):\(error.position.line):\(error.position.column): \(error.message)")
            }
            guard case .object(let members) = root else {
                throw UsageError("config file \(path): expected a JSON object ({ ... }) at the top, found \(root.typeName)")
            }
            try applyFile(members, prefix: "", path: path, to: &result)
        }

        for spec in specs {
            guard let name = spec.environment, let text = environment[name], !text.isEmpty else { continue }
            try apply(spec, text: text, origin: name, to: &result.options)
            result.sources[spec.key] = .environment
        }
        // A repeatable flag's values become one comma-separated value.
        var merged: [(spec: OptionSpec<Options>, name: String, value: String)] = []
        for flag in flags {
            if flag.spec.repeatable, let i = merged.firstIndex(where: { $0.spec.key == flag.spec.key }) {
                merged[i].value += "," + flag.value
            } else {
                merged.append(flag)
            }
        }
        for (spec, name, value) in merged {
            try apply(spec, text: value, origin: name, to: &result.options)
            result.sources[spec.key] = .flag
        }
        return result
    }

    /// Warnings for `SWIFTLET_*` variables that look like a misspelt option
    /// (`SWIFTLET_WORKERZ`). Not errors: other tools share the prefix.
    func misspeltEnvironment(_ environment: [String: String], alsoKnown: [String] = []) -> [String] {
        let known = specs.compactMap(\.environment) + (configEnvironment.map { [$0] } ?? []) + alsoKnown
        return environment.keys.sorted().compactMap { name in
            guard name.hasPrefix("SWIFTLET_"), !known.contains(name), let near = known.nearest(to: name, by: { $0 }) else {
                return nil
            }
            return "\(name) is not an option of \(command) and is ignored; did you mean \(near)?"
        }
    }

    /// `--name=value` or `--name`.
    static func split(_ argument: String) -> (String, String?) {
        guard let eq = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
    }

    static func boolean(_ text: String) -> String? {
        switch text.lowercased() {
        case "1", "true", "yes", "on": "true"
        case "0", "false", "no", "off": "false"
        default: nil
        }
    }

    private func apply(
        _ spec: OptionSpec<Options>, text: String, origin: String, to options: inout Options
    )
        throws(UsageError)
    {
        switch spec.kind {
        case .toggle:
            guard let value = Self.boolean(text), spec.set(&options, value) else {
                throw UsageError("\(origin) wants true or false (or 1 or 0), got '\(text)'")
            }
        case .value:
            guard spec.set(&options, text) else {
                throw UsageError("\(origin) wants \(spec.expects), got '\(spec.secret ? "<redacted>" : text)'")
            }
        case .map:
            // name:value,name:value
            var entries: [(String, String)] = []
            for item in text.split(separator: ",") {
                guard let colon = item.firstIndex(of: ":"), colon != item.startIndex else {
                    throw UsageError("\(origin) wants \(spec.expects) as name:value,name:value")
                }
                entries.append((String(item[..<colon]), String(item[item.index(after: colon)...])))
            }
            guard spec.setMap(&options, entries) else { throw UsageError("\(origin) wants \(spec.expects)") }
        }
    }

    private func applyFile(
        _ members: [ConfigJSON.Member], prefix: String, path: String, to result: inout Result
    ) throws(UsageError) {
        for member in members {
            let key = prefix + member.key
            let at = "config file \(path):\(member.position.line):\(member.position.column)"
            guard let spec = specs.first(where: { $0.key == key }) else {
                // A nested object some keys live in ("tls": {"cert": ...}).
                if specs.contains(where: { $0.key.hasPrefix(key + ".") }) {
                    guard case .object(let inner) = member.value else {
                        throw UsageError("\(at): '\(key)' wants an object ({ ... }), found \(member.value.typeName)")
                    }
                    try applyFile(inner, prefix: key + ".", path: path, to: &result)
                    continue
                }
                let keys = specs.map(\.key) + specs.compactMap { $0.key.split(separator: ".").first.map(String.init) }
                throw UsageError(
                    "\(at): unknown key '\(key)'\(String.suggestion(keys.nearest(to: key) { $0 })); "
                        + "the keys are listed by \(command) --help")
            }
            let text: String
            switch (spec.kind, member.value) {
            case (.toggle, .bool(let b)): text = b ? "true" : "false"
            case (.value(_, .string), .string(let s)), (.value(_, .duration), .string(let s)): text = s
            case (.value(_, .integer), .number(let n)), (.value(_, .duration), .number(let n)): text = n
            case (.map, .object(let inner)):
                var entries: [(String, String)] = []
                for m in inner {
                    guard case .string(let s) = m.value else {
                        throw UsageError(
                            "config file \(path):\(m.position.line):\(m.position.column): '\(key).\(m.key)' wants a string, "
                                + "found \(m.value.typeName)")
                    }
                    entries.append((m.key, s))
                }
                guard spec.setMap(&result.options, entries) else { throw UsageError("\(at): '\(key)' wants \(spec.expects)") }
                result.sources[spec.key] = .file
                continue
            default:
                throw UsageError("\(at): '\(key)' wants \(spec.expects), found \(member.value.typeName)")
            }
            try apply(spec, text: text, origin: "\(at): '\(key)'", to: &result.options)
            result.sources[spec.key] = .file
        }
    }
}
