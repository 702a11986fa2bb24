/// What a subscriber wants of one video track (`set-preference`): the
/// largest width, and/or the highest simulcast layer (0 lowest). The
/// forwarded layer is the lowest of this, what the subscriber's bandwidth
/// estimate carries and what the publisher sends (issue #5). `maxWidth` 0
/// or `maxLayer` < 0 pauses the track for this subscriber.
package struct ReceivePreference: Equatable, Sendable {
    package var maxWidth: Int?
    package var maxLayer: Int?
    package init(maxWidth: Int? = nil, maxLayer: Int? = nil) {
        self.maxWidth = maxWidth
        self.maxLayer = maxLayer
    }

    package var isPaused: Bool { maxWidth == 0 || (maxLayer.map { $0 < 0 } ?? false) }
}
