/// `--help` and the effective configuration, both from the option table.
extension OptionParser {
    /// The options section of a command's help: per option its flag and
    /// value, what it does, its default, its environment variable and
    /// config key, and an example.
    func helpText() -> String {
        var out = ""
        if let configFlag {
            out += "  \(configFlag) FILE\n"
            out += "      read options from a JSON config file (unknown keys are errors)\n"
            out += "      env \(configEnvironment ?? "-"); e.g. \(configFlag) /etc/swiftlet.json\n"
        }
        for spec in specs {
            let head: String
            switch spec.kind {
            case .toggle: head = spec.flag ?? "(no flag)"
            case .value(let placeholder, _): head = spec.flag.map { "\($0) \(placeholder)" } ?? "(no flag)"
            case .map: head = "\"\(spec.key)\" (config file or environment only, no flag)"
            }
            out += "  \(head)\n      \(spec.help) (default: \(spec.defaultText))\n"
            var sources: [String] = []
            if let env = spec.environment { sources.append("env \(env)") }
            if configFlag != nil { sources.append("config \"\(spec.key)\"") }
            if let example = spec.example { sources.append("e.g. \(example)") }
            if !sources.isEmpty { out += "      \(sources.joined(separator: "; "))\n" }
        }
        out += "  -h, --help\n      show this help\n"
        return out
    }

    /// One line per option: config key, effective value, where it came
    /// from. Secrets print as `<redacted>`; maps show their names only.
    func effectiveConfiguration(_ result: Result) -> String {
        let width = specs.map(\.key.count).max() ?? 0
        var out = ""
        if let path = result.configPath { out += "    config file: \(path)\n" }
        for spec in specs {
            guard var value = spec.show(result.options) else { continue }
            if spec.secret { value = "<redacted>" }
            let source = result.sources[spec.key] ?? .defaultValue
            let padded = spec.key + String(repeating: " ", count: width - spec.key.count)
            out += "    \(padded)  \(value)  (\(source.rawValue))\n"
        }
        return out
    }
}
