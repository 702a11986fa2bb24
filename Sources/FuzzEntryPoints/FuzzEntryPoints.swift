/// One function per parser, taking arbitrary bytes. The libFuzzer binaries
/// in Fuzz/ call these, and FuzzEntryPointsTests replays the seed corpus
/// through them, so fuzzing and CI exercise the same code.
public enum FuzzEntryPoints {}
