import Codecs
import Wire

/// Releasing pending frames in sequence order, and decodability through
/// the temporal-layer chain (RFC 7741 section 4.2).
extension VP8FrameAssembler {
    /// Releases the frames at the head of the list that are complete and
    /// follow the last released one without a gap; gives up the head when
    /// it has waited past the reorder bounds (or always, with `force`).
    mutating func release(arrival: Instant, force: Bool) {
        while let head = pending.first {
            // Nothing can be missing between the last released frame and
            // the head: no sequence gap, or the picture ID follows on (the
            // gap is the tail of a frame given up).
            let contiguous =
                releasedThrough == nil || head.firstSequence.map { $0 == (releasedThrough ?? 0) + 1 } == true
                || followsLastPicture(head)
            if head.isComplete && contiguous {
                pending.removeFirst()
                emit(head, arrival: arrival)
                continue
            }
            if head.isComplete && independentOfGap(head) {
                pending.removeFirst()
                attributeLostFrames(before: head)
                emit(head, arrival: arrival)
                continue
            }
            // Nothing released yet and the head lacks its start: we joined
            // mid-frame, and that frame can never be completed.
            let joinedMidFrame = releasedThrough == nil && head.firstSequence == nil && pending.count > 1
            // A complete keyframe behind the head makes it moot: nothing
            // after the keyframe references it (a browser drops it too).
            let keyframeBehind = pending.dropFirst().contains { $0.isKeyframe && $0.isComplete }
            let waitedTooLong =
                pending.count > reorderFrames || arrival - head.firstArrival > reorderWindow || joinedMidFrame
                || keyframeBehind
            guard force || waitedTooLong else { return }
            pending.removeFirst()
            if head.isComplete {
                // The gap before it held whole frames that never came.
                attributeLostFrames(before: head)
                emit(head, arrival: arrival)
            } else {
                giveUp(head)
            }
        }
    }

    /// Gives up the oldest pending frame whatever it waits for.
    mutating func giveUpHead() {
        guard let head = pending.first else { return }
        pending.removeFirst()
        if head.isComplete {
            attributeLostFrames(before: head)
            emit(head, arrival: head.firstArrival)
        } else {
            giveUp(head)
        }
    }

    private mutating func giveUp(_ frame: PendingFrame) {
        statistics.framesIncomplete += 1
        markBroken(layer: frame.temporalLayer ?? 0)
        releasedThrough = max(releasedThrough ?? 0, frame.lastSequence ?? frame.highest)
        if reassemblyTimestamp == frame.timestamp { reassemblyTimestamp = nil }
        if frame.firstSequence != nil {
            if let pid = frame.pictureID { lastPictureID = pid }
            if let index = frame.tl0PictureIndex { lastTL0PictureIndex = index }
        }
    }

    private mutating func emit(_ frame: PendingFrame, arrival: Instant) {
        releasedThrough = frame.lastSequence ?? frame.highest
        let hasBytes = reassemblyTimestamp == frame.timestamp && !frameBuffer.isEmpty
        if frame.waited { statistics.framesCompletedLate += 1 }
        let decodable = decodability(of: frame)
        if let pid = frame.pictureID { lastPictureID = pid }
        if let index = frame.tl0PictureIndex { lastTL0PictureIndex = index }
        if pendingSwitch {
            pendingSwitch = false
            statistics.switches += 1
            if !frame.isKeyframe { statistics.switchesNotOnKeyframe += 1 }
            // The new stream's first keyframe sets its size without
            // counting the same switch again.
            resolution = nil
        } else if frame.isKeyframe, let previous = resolution, let w = frame.width, let h = frame.height,
            previous.width != w || previous.height != h
        {
            statistics.switches += 1
        }
        if frame.isKeyframe, let w = frame.width, let h = frame.height { resolution = (w, h) }
        ready.append(
            Frame(
                ssrc: ssrc ?? SSRC(0), rtpTimestamp: frame.timestamp, pictureID: frame.pictureID,
                temporalLayer: frame.temporalLayer, isKeyframe: frame.isKeyframe,
                width: frame.isKeyframe ? frame.width : nil, height: frame.isKeyframe ? frame.height : nil,
                isDecodable: decodable, captureTime: frame.captureTime, completedAt: arrival,
                byteCount: frame.byteCount, packetCount: frame.packetCount, hasBytes: hasBytes))
    }

    /// A keyframe repairs everything; a Y frame of layer t > 0 needs only
    /// the base layer and repairs layer t; any other frame of layer t
    /// needs layers 0...t intact (RFC 7741 section 4.2).
    private mutating func decodability(of frame: PendingFrame) -> Bool {
        statistics.framesComplete += 1
        let layer = min(frame.temporalLayer ?? 0, 3)
        let decodable: Bool
        if frame.isKeyframe {
            statistics.keyframes += 1
            brokenLayers = 0
            decodable = true
        } else if frame.layerSync && layer > 0 {
            decodable = brokenLayers & 1 == 0
            if decodable { brokenLayers &= ~(1 << layer) }
        } else {
            decodable = brokenLayers & ((1 << (layer + 1)) - 1) == 0
        }
        if !decodable {
            statistics.framesUndecodable += 1
            markBroken(layer: layer)
        }
        return decodable
    }

    /// Whole frames are missing before `frame`, but TL0PICIDX shows none
    /// was a base-layer frame, and `frame` references only the base layer
    /// (a TL0 frame, or a Y frame above it): a browser decodes it without
    /// waiting for the missing ones (RFC 7741 section 4.2).
    private func independentOfGap(_ frame: PendingFrame) -> Bool {
        guard frame.firstSequence != nil, let last = lastTL0PictureIndex, let index = frame.tl0PictureIndex,
            let layer = frame.temporalLayer
        else { return false }
        if layer == 0 { return index == last &+ 1 }
        return frame.layerSync && index == last
    }

    private func followsLastPicture(_ frame: PendingFrame) -> Bool {
        guard let last = lastPictureID, let pid = frame.pictureID else { return false }
        return (pid &- last) & (frame.hasLongPictureID ? 0x7FFF : 0x7F) == 1
    }

    /// Whole frames vanished before `next` when its picture ID skipped;
    /// TL0PICIDX says whether one of them was a base-layer frame (RFC 7741
    /// section 4.2).
    private mutating func attributeLostFrames(before next: PendingFrame) {
        guard let last = lastPictureID, let pid = next.pictureID else {
            markBroken(layer: 0)
            return
        }
        let mask: UInt16 = next.hasLongPictureID ? 0x7FFF : 0x7F
        guard (pid &- last) & mask != 1 else { return }
        if let lastIndex = lastTL0PictureIndex, let index = next.tl0PictureIndex, let layer = next.temporalLayer {
            let expected = layer == 0 ? lastIndex &+ 1 : lastIndex
            markBroken(layer: index == expected ? 1 : 0)
        } else {
            markBroken(layer: 0)
        }
    }

    private mutating func markBroken(layer: UInt8) {
        brokenLayers |= 0x0F & ~((1 << min(layer, 3)) - 1)
    }
}
