/// The reference structure of VP8 temporal layers: which layer each frame
/// of the period belongs to and which reference buffers it may read and
/// refresh, so that every frame above the base layer can be dropped by an
/// SFU without breaking the layers below it (RFC 7741 section 4.2, TID and
/// Y; libvpx's `VP8_EFLAG_NO_REF_*` / `VP8_EFLAG_NO_UPD_*`).
///
/// The pattern restarts at every keyframe (the encoder's keyframe interval
/// is a multiple of `periodicity`), and a keyframe refreshes every buffer.
///
/// - One layer: every frame reads and refreshes LAST.
/// - Two layers, period 2: TL0 reads and refreshes LAST; TL1 reads LAST and
///   refreshes nothing (droppable, and always a layer sync).
/// - Three layers, period 4 (TL0, TL2, TL1, TL2): TL0 reads and refreshes
///   LAST; the first TL2 reads LAST only (sync) and refreshes nothing; TL1
///   reads LAST only (sync) and refreshes GOLDEN; the second TL2 reads LAST
///   and GOLDEN (not a sync: it needs the TL1 frame) and refreshes nothing.
///
/// So TL0 frames depend only on TL0 frames, TL1 only on TL0, and only TL1
/// writes GOLDEN, which only TL2 reads: decoding TL0 alone, or TL0+TL1,
/// never needs a dropped frame. The alt-ref buffer is never used.
package struct TemporalLayerPattern: Equatable, Sendable {
    package struct Position: Equatable, Sendable {
        package var layer: UInt8
        package var layerSync: Bool
        package var readsLast: Bool
        package var readsGolden: Bool
        package var refreshesLast: Bool
        package var refreshesGolden: Bool
    }

    /// 1, 2 or 3.
    package let layerCount: UInt8
    package let positions: [Position]
    package var periodicity: Int { positions.count }

    /// nil unless `layerCount` is 1, 2 or 3.
    package init?(layerCount: UInt8) {
        self.layerCount = layerCount
        let base = Position(
            layer: 0, layerSync: false, readsLast: true, readsGolden: false, refreshesLast: true, refreshesGolden: false)
        switch layerCount {
        case 1:
            positions = [base]
        case 2:
            positions = [
                base,
                Position(
                    layer: 1, layerSync: true, readsLast: true, readsGolden: false, refreshesLast: false,
                    refreshesGolden: false),
            ]
        case 3:
            positions = [
                base,
                Position(
                    layer: 2, layerSync: true, readsLast: true, readsGolden: false, refreshesLast: false,
                    refreshesGolden: false),
                Position(
                    layer: 1, layerSync: true, readsLast: true, readsGolden: false, refreshesLast: false,
                    refreshesGolden: true),
                Position(
                    layer: 2, layerSync: false, readsLast: true, readsGolden: true, refreshesLast: false,
                    refreshesGolden: false),
            ]
        default:
            return nil
        }
    }

    /// The position of frame `index` counted from the last keyframe.
    package func position(framesSinceKeyframe index: Int) -> Position {
        positions[((index % positions.count) + positions.count) % positions.count]
    }

    /// libvpx `ts_rate_decimator` per layer: layer k runs at
    /// 1/decimator of the full frame rate (1, 2, or 4 in this pattern).
    package var rateDecimators: [UInt32] {
        switch layerCount {
        case 2: return [2, 1]
        case 3: return [4, 2, 1]
        default: return [1]
        }
    }

    /// libvpx `ts_target_bitrate` shares: the cumulative fraction of the
    /// total bitrate up to and including each layer, in percent (libwebrtc
    /// uses 60/100 for two layers and 40/60/100 for three).
    package var cumulativeBitratePercent: [UInt32] {
        switch layerCount {
        case 2: return [60, 100]
        case 3: return [40, 60, 100]
        default: return [100]
        }
    }
}
