import Testing

/// The cluster's tests with real processes, Redis and threads that wait,
/// one at a time, in a `swift test` run of their own (Scripts/test): each
/// blocks a thread of the test runner's pool for seconds while nodes
/// refresh, expire and reconnect, and beside the rest of the suite on two
/// cores they starved the other tests of threads (every test then waits
/// past its time limit). Nested suites inherit `.serialized`.
@Suite(.serialized) struct ClusterProcessSuite {}
