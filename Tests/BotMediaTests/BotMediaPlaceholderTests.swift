import Testing

@Test func placeholderBotMedia() {}
