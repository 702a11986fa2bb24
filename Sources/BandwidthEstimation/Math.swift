/// The few real functions the controllers need; the standard library has
/// none and the sans-IO rule keeps Foundation and Glibc out.
enum Math {
    /// `base` raised to `exponent` for the small positive exponents used here,
    /// without Foundation: e^(exponent * ln base) by series.
    static func power(_ base: Double, _ exponent: Double) -> Double {
        exponential(exponent * logarithm(base))
    }

    /// Natural logarithm of a positive number, by range reduction to
    /// [1, 2) and an atanh series.
    static func logarithm(_ x: Double) -> Double {
        guard x > 0, x.isFinite else { return x == 0 ? -.infinity : .nan }
        let exponent = Double(x.exponent)
        let mantissa = x.significand  // in [1, 2)
        let s = (mantissa - 1) / (mantissa + 1)
        let s2 = s * s
        var term = s
        var sum = 0.0
        var k = 1.0
        for _ in 0..<30 {
            sum += term / k
            term *= s2
            k += 2
        }
        return 2 * sum + exponent * 0.693_147_180_559_945_3
    }

    /// e^x for |x| up to a few hundred, by halving until small and squaring back.
    static func exponential(_ x: Double) -> Double {
        guard x.isFinite else { return x > 0 ? .infinity : (x.isNaN ? .nan : 0) }
        var reduced = x
        var halvings = 0
        while abs(reduced) > 0.5, halvings < 64 {
            reduced /= 2
            halvings += 1
        }
        var term = 1.0
        var sum = 1.0
        for n in 1..<20 {
            term *= reduced / Double(n)
            sum += term
        }
        for _ in 0..<halvings { sum *= sum }
        return sum
    }
}
