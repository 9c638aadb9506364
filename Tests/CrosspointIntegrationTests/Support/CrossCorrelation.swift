import Foundation

/// How many samples a recording trails the signal it holds: the lag at which the recording
/// differs least from the signal, sample by sample (least squares), found through a
/// cross-correlation computed with the FFT.
enum CrossCorrelation {
    /// The lag k (in samples; negative if the recording leads) that minimises
    /// Σ_pairs Σ_n (recorded[n + k] - expected[n])², n over the expected channel (the
    /// recording is silence outside its length), over the pairs whose expected channel
    /// carries any signal; nil when none does. Unlike the cross-correlation alone, this
    /// counts the recording's sound where the signal is silent: a tone after silence
    /// matches only at its true onset, not a whole number of periods from it.
    static func lag(recorded: [[Float]], expected: [[Float]]) -> Int? {
        let pairs = zip(recorded, expected).filter { pair in !pair.0.isEmpty && pair.1.contains { $0 != 0 } }
        guard !pairs.isEmpty else { return nil }
        let recordedLength = pairs.map(\.0.count).max()!, expectedLength = pairs.map(\.1.count).max()!
        var n = 1
        while n < recordedLength + expectedLength { n <<= 1 }  // no wrap-around between lags
        let twiddles = Twiddles(n)
        // Σ_pairs FFT(recorded) · conj(FFT(expected)), both of a pair from one complex FFT.
        var sumRe = [Double](repeating: 0, count: n), sumIm = [Double](repeating: 0, count: n)
        var re = [Double](repeating: 0, count: n), im = [Double](repeating: 0, count: n)
        for (r, e) in pairs {
            re.withUnsafeMutableBufferPointer { re in
                im.withUnsafeMutableBufferPointer { im in
                    sumRe.withUnsafeMutableBufferPointer { sumRe in
                        sumIm.withUnsafeMutableBufferPointer { sumIm in
                            for k in 0..<n { re[k] = 0; im[k] = 0 }
                            r.withUnsafeBufferPointer { r in for k in 0..<r.count { re[k] = Double(r[k]) } }
                            e.withUnsafeBufferPointer { e in for k in 0..<e.count { im[k] = Double(e[k]) } }
                            transform(re.baseAddress!, im.baseAddress!, n, twiddles, inverse: false)
                            // X = R + iE with R, E the spectra of the real r and e:
                            // R[k] = (X[k] + conj X[n-k]) / 2, E[k] = (X[k] - conj X[n-k]) / 2i.
                            for k in 0..<n {
                                let m = (n - k) & (n - 1)
                                let rRe = (re[k] + re[m]) / 2, rIm = (im[k] - im[m]) / 2
                                let eRe = (im[k] + im[m]) / 2, eIm = (re[m] - re[k]) / 2
                                sumRe[k] += rRe * eRe + rIm * eIm  // R · conj(E)
                                sumIm[k] += rIm * eRe - rRe * eIm
                            }
                        }
                    }
                }
            }
        }
        sumRe.withUnsafeMutableBufferPointer { re in
            sumIm.withUnsafeMutableBufferPointer { im in transform(re.baseAddress!, im.baseAddress!, n, twiddles, inverse: true) }
        }
        // Σ (r - e)² = Σ r² - 2 Σ r·e + Σ e², the last the same at every lag. Σ r² over the
        // window [k, k + expected length) from running sums, per pair; r is 0 outside.
        var energy = [Double](repeating: 0, count: recordedLength + 1)  // Σ over pairs of r² before index i
        for (r, _) in pairs {
            var running = 0.0
            for i in 0..<recordedLength {
                if i < r.count { running += Double(r[i]) * Double(r[i]) }
                energy[i + 1] += running
            }
        }
        func windowEnergy(_ k: Int, _ length: Int) -> Double {
            let from = min(max(k, 0), recordedLength), to = min(max(k + length, 0), recordedLength)
            return energy[to] - energy[from]
        }
        // Index k of the correlation holds lag k, index n - k lag -k.
        var best = 0, bestValue = Double.infinity
        for k in (1 - expectedLength)..<recordedLength {
            let correlation = k >= 0 ? sumRe[k] : sumRe[n + k]
            let value = windowEnergy(k, expectedLength) - 2 * correlation / Double(n)
            if value < bestValue { best = k; bestValue = value }
        }
        return best
    }

    /// cos and sin of 2πm/n for m < n/2.
    private struct Twiddles {
        let cos: [Double], sin: [Double]
        init(_ n: Int) {
            cos = (0..<n / 2).map { Foundation.cos(2 * .pi * Double($0) / Double(n)) }
            sin = (0..<n / 2).map { Foundation.sin(2 * .pi * Double($0) / Double(n)) }
        }
    }

    /// In-place radix-2 FFT of n (a power of two) complex values; unscaled either way.
    private static func transform(
        _ re: UnsafeMutablePointer<Double>, _ im: UnsafeMutablePointer<Double>, _ n: Int, _ twiddles: Twiddles, inverse: Bool
    ) {
        var j = 0
        var i = 1
        while i < n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j { swap(&re[i], &re[j]); swap(&im[i], &im[j]) }
            i += 1
        }
        let sign: Double = inverse ? 1 : -1
        twiddles.cos.withUnsafeBufferPointer { cosTable in
            twiddles.sin.withUnsafeBufferPointer { sinTable in
                var length = 2
                while length <= n {
                    let half = length >> 1, step = n / length
                    var start = 0
                    while start < n {
                        var k = 0
                        while k < half {
                            let wr = cosTable[k * step], wi = sign * sinTable[k * step]
                            let a = start + k, b = a + half
                            let tr = re[b] * wr - im[b] * wi, ti = re[b] * wi + im[b] * wr
                            re[b] = re[a] - tr; im[b] = im[a] - ti
                            re[a] += tr; im[a] += ti
                            k += 1
                        }
                        start += length
                    }
                    length <<= 1
                }
            }
        }
    }
}
