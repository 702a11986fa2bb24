/// A moving synthetic picture in I420 (planar Y, then U and V at half
/// resolution), different in every frame: a scrolling luma ramp, a box that
/// bounces across the picture, colour bars that drift, and the frame number
/// as 16 black/white blocks along the top edge, so a decoded frame can be
/// told apart from its neighbours. With `grain`, luma also carries noise
/// that changes every frame, so the encoder needs bits to reach a high
/// target rate (`--video-kbps`, issue #14).
struct TestPattern {
    let width: Int
    let height: Int
    /// Noise amplitude in luma steps (0: none): each pixel of each frame
    /// moves by up to +-grain, from a hash of its position and the frame.
    var grain = 0
    /// Y plane size; U and V follow, each a quarter of it.
    var lumaCount: Int { width * height }
    var byteCount: Int { lumaCount + 2 * (width / 2) * (height / 2) }

    /// Fills `frame` (at least `byteCount` bytes) with picture `index`.
    func render(index: Int, into frame: inout [UInt8]) {
        let w = width
        let h = height
        let boxSize = max(8, h / 4)
        let travelX = max(1, w - boxSize)
        let travelY = max(1, h - boxSize)
        let stepX = index &* max(1, w / 90)
        let stepY = index &* max(1, h / 70)
        let boxX = bounce(stepX, travelX)
        let boxY = bounce(stepY, travelY)
        let scroll = index &* 3
        let counterBlock = max(2, w / 32)
        frame.withUnsafeMutableBufferPointer { pixels in
            for y in 0..<h {
                let row = y * w
                for x in 0..<w {
                    var luma = UInt8(truncatingIfNeeded: 16 + ((x &+ scroll &+ y / 2) & 0xFF) * 200 / 255)
                    if x >= boxX && x < boxX + boxSize && y >= boxY && y < boxY + boxSize {
                        luma = 235 &- UInt8(truncatingIfNeeded: (x - boxX) & 0x1F)
                    }
                    if y < counterBlock && x < 16 * counterBlock {
                        let bit = x / counterBlock
                        luma = (index >> bit) & 1 == 1 ? 235 : 16
                    }
                    if grain > 0 { luma = Self.grained(luma, grain: grain, x: x, y: y, index: index) }
                    pixels[row + x] = luma
                }
            }
            let cw = w / 2
            let ch = h / 2
            let uBase = w * h
            let vBase = uBase + cw * ch
            for y in 0..<ch {
                for x in 0..<cw {
                    let bar = ((x &+ index) * 8 / max(1, cw)) & 7
                    pixels[uBase + y * cw + x] = UInt8(truncatingIfNeeded: 64 + bar * 20)
                    pixels[vBase + y * cw + x] = UInt8(truncatingIfNeeded: 200 - bar * 16 + (y * 32 / max(1, ch)))
                }
            }
        }
    }

    /// `luma` moved by a pseudo-random -grain...grain (a 32-bit integer
    /// hash of position and frame), clamped to video range 16...235.
    static func grained(_ luma: UInt8, grain: Int, x: Int, y: Int, index: Int) -> UInt8 {
        var v = UInt32(truncatingIfNeeded: x) &* 0x9E37_79B1 ^ UInt32(truncatingIfNeeded: y) &* 0x85EB_CA77
        v ^= UInt32(truncatingIfNeeded: index) &* 0xC2B2_AE3D
        v ^= v >> 15
        v &*= 0x2C1B_3C6D
        v ^= v >> 12
        let offset = Int(v % UInt32(2 * grain + 1)) - grain
        return UInt8(min(235, max(16, Int(luma) + offset)))
    }

    /// A position that moves forward to `travel` and back again.
    private func bounce(_ step: Int, _ travel: Int) -> Int {
        let phase = step % (2 * travel)
        return phase < travel ? phase : 2 * travel - phase
    }
}
