/// One option of a command, declared once: its command-line flag, its
/// environment variable, its config-file key, what it expects, its default,
/// its help and an example. Flags, `--flag=value`, `SWIFTLET_*` variables,
/// config keys (and the suggestions for unknown ones), `--help` and the
/// effective configuration printed at start all come from this one table,
/// so an option added here is complete everywhere (docs/CONFIGURATION.md).
struct OptionSpec<Options>: Sendable {
    enum Kind: Sendable {
        /// Takes a value: `--flag VALUE`, `--flag=VALUE`; in JSON a string,
        /// or a number, as `json` says.
        case value(placeholder: String, json: JSONKind)
        /// A switch: `--flag` (or `--flag=true|false`); `1`, `true`, `yes`
        /// or `0`, `false`, `no` in the environment; true or false in JSON.
        case toggle
        /// Name to value pairs: a JSON object of strings in the config
        /// file; `name:value,name:value` in the environment; no flag.
        case map
    }

    enum JSONKind: Sendable {
        case string, integer
        /// A number of seconds or a string with a unit (`"30s"`).
        case duration
    }

    /// The config key: `udpPort`, or a dotted path into a nested object
    /// (`tls.cert` is `{"tls": {"cert": ...}}`).
    var key: String
    var flag: String?
    var environment: String?
    var kind: Kind
    /// What a valid value looks like, for error messages: "a port 0...65535".
    var expects: String
    /// The default, as help prints it.
    var defaultText: String
    var help: String
    var example: String? = nil
    /// Never printed: the effective configuration shows `<redacted>`.
    var secret = false
    /// Applies a value (text; "true"/"false" for toggles); false when the
    /// value is not what `expects` says.
    var set: @Sendable (inout Options, String) -> Bool = { _, _ in false }
    /// For `.map` options.
    var setMap: @Sendable (inout Options, [(String, String)]) -> Bool = { _, _ in false }
    /// The effective value for the start-up print; nil: not shown.
    var show: @Sendable (Options) -> String? = { _ in nil }
    /// The flag may be given more than once: its values are joined with
    /// commas and applied as one (`--webhook-url A --webhook-url B`).
    var repeatable = false

    var placeholder: String? {
        if case .value(let p, _) = kind { return p }
        return nil
    }
}

/// Where an effective value came from, in rising precedence.
enum OptionSource: String, Comparable {
    case defaultValue = "default", file = "config file", environment = "environment", flag = "flag"
    private var rank: Int {
        switch self {
        case .defaultValue: 0
        case .file: 1
        case .environment: 2
        case .flag: 3
        }
    }
    static func < (a: OptionSource, b: OptionSource) -> Bool { a.rank < b.rank }
}

/// A command line that cannot run: the message says what was expected.
/// Exit status 64 (EX_USAGE).
struct UsageError: Error, Equatable, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Array {
    func nearest<S: StringProtocol>(to word: S, by name: (Element) -> String?) -> String? {
        var best: (String, Int)?
        for element in self {
            guard let candidate = name(element) else { continue }
            let d = editDistance(candidate.lowercased(), word.lowercased())
            if d < (best?.1 ?? .max) { best = (candidate, d) }
        }
        // A suggestion only when it is plausibly the same word.
        guard let best, best.1 <= Swift.max(2, word.count / 3) else { return nil }
        return best.0
    }
}

/// Levenshtein distance; both strings are short option names.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.unicodeScalars.prefix(64)), b = Array(b.unicodeScalars.prefix(64))
    var previous = Array(0...b.count)
    for i in 1...max(1, a.count) where !a.isEmpty {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in stride(from: 1, through: b.count, by: 1) {
            current[j] = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return a.isEmpty ? b.count : previous[b.count]
}

extension String {
    /// "did you mean ...?" or "", for the end of an error message.
    static func suggestion(_ candidate: String?) -> String {
        candidate.map { "; did you mean '\($0)'?" } ?? ""
    }
}
