import Testing

@Test func placeholderBandwidthEstimation() {}
