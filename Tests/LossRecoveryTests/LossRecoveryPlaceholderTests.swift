import Testing

@Test func placeholderLossRecovery() {}
