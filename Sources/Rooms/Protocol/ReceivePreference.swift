/// What a subscriber wants of one video track (`set-preference`): the
/// largest width, and/or the highest simulcast layer (0 lowest). The
/// forwarded layer is the lowest of this, what the subscriber's bandwidth
/// estimate carries and what the publisher sends (issue #5). `maxWidth` 0
/// or `maxLayer` < 0 pauses the track for this subscriber.
public struct ReceivePreference: Equatable, Sendable {
    public var maxWidth: Int?
    public var maxLayer: Int?
    public init(maxWidth: Int? = nil, maxLayer: Int? = nil) {
        self.maxWidth = maxWidth
        self.maxLayer = maxLayer
    }

    public var isPaused: Bool { maxWidth == 0 || (maxLayer.map { $0 < 0 } ?? false) }
}
