//! Choosing the next token from logits: greedy, or temperature sampling restricted by top-k,
//! top-p (nucleus) and min-p, after a repetition penalty — the knobs llama.cpp and mlx-lm
//! expose. It runs on the host over one row of logits (a vocabulary is tens of thousands of
//! floats, far below what a kernel launch would save) and is deterministic for a seed.

use alloc::vec::Vec;

use mlx_arm_core::{Error, Result};

/// Sampling settings. `Default` is greedy decoding.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplerConfig {
    /// Softmax temperature; 0 picks the most likely token (greedy).
    pub temperature: f32,
    /// Keep only the `top_k` most likely tokens (0 = all).
    pub top_k: usize,
    /// Keep the smallest set of tokens whose probability reaches `top_p` (1 = all).
    pub top_p: f32,
    /// Drop tokens less likely than `min_p` times the most likely one (0 = none).
    pub min_p: f32,
    /// Divide positive logits (multiply negative ones) of recently seen tokens by this (1 = off).
    pub repetition_penalty: f32,
    /// How many of the latest tokens the repetition penalty looks at.
    pub repetition_context: usize,
    /// Seed of the random stream.
    pub seed: u64,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            temperature: 0.0,
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            repetition_penalty: 1.0,
            repetition_context: 64,
            seed: 0,
        }
    }
}

impl SamplerConfig {
    /// Rejects settings with no meaning (negative temperature, p outside [0, 1] …).
    pub fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::invalid("sampler", m));
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return bad("temperature must be a finite number >= 0");
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return bad("top_p must be in (0, 1]");
        }
        if !(0.0..=1.0).contains(&self.min_p) {
            return bad("min_p must be in [0, 1]");
        }
        if !(self.repetition_penalty.is_finite() && self.repetition_penalty > 0.0) {
            return bad("repetition_penalty must be a positive number");
        }
        Ok(())
    }
}

/// A seeded sampler.
#[derive(Clone, Debug)]
pub struct Sampler {
    cfg: SamplerConfig,
    rng: Pcg32,
}

impl Sampler {
    /// A sampler with `cfg` (validated).
    pub fn new(cfg: SamplerConfig) -> Result<Sampler> {
        cfg.validate()?;
        let rng = Pcg32::new(cfg.seed);
        Ok(Sampler { cfg, rng })
    }

    /// The settings.
    pub fn config(&self) -> &SamplerConfig {
        &self.cfg
    }

    /// Whether every choice is the plain argmax of the logits (no temperature, no penalty):
    /// then the choice can be made where the logits are (`generate::step_greedy`).
    pub fn is_greedy(&self) -> bool {
        self.cfg.temperature == 0.0 && self.cfg.repetition_penalty == 1.0
    }

    /// Picks the next token from one row of `logits`, given the tokens so far (`history`,
    /// for the repetition penalty).
    pub fn sample(&mut self, logits: &[f32], history: &[u32]) -> Result<u32> {
        if logits.is_empty() {
            return Err(Error::invalid("sampler", "no logits to sample from"));
        }
        let mut l: Vec<f32> = logits.to_vec();
        if self.cfg.repetition_penalty != 1.0 {
            let start = history.len().saturating_sub(self.cfg.repetition_context);
            let mut seen: Vec<u32> = history[start..].to_vec();
            seen.sort_unstable();
            seen.dedup();
            for &t in &seen {
                if let Some(v) = l.get_mut(t as usize) {
                    *v = if *v > 0.0 { *v / self.cfg.repetition_penalty } else { *v * self.cfg.repetition_penalty };
                }
            }
        }
        if self.cfg.temperature == 0.0 {
            return Ok(argmax(&l));
        }
        // Candidates sorted by logit, most likely first (ties by lower id, so runs repeat).
        let mut idx: Vec<u32> = (0..l.len() as u32).filter(|&i| !l[i as usize].is_nan()).collect();
        if idx.is_empty() {
            return Err(Error::invalid("sampler", "every logit is NaN"));
        }
        idx.sort_unstable_by(|&a, &b| l[b as usize].total_cmp(&l[a as usize]).then(a.cmp(&b)));
        if self.cfg.top_k > 0 {
            idx.truncate(self.cfg.top_k);
        }
        let max = l[idx[0] as usize];
        let inv_t = 1.0 / self.cfg.temperature;
        let mut probs: Vec<f32> = idx.iter().map(|&i| libm::expf((l[i as usize] - max) * inv_t)).collect();
        let total: f32 = probs.iter().sum();
        probs.iter_mut().for_each(|p| *p /= total);
        // min-p: relative to the most likely token (probs[0]).
        if self.cfg.min_p > 0.0 {
            let floor = self.cfg.min_p * probs[0];
            let keep = probs.iter().take_while(|&&p| p >= floor).count().max(1);
            probs.truncate(keep);
            idx.truncate(keep);
        }
        if self.cfg.top_p < 1.0 {
            let mut acc = 0.0;
            let mut keep = probs.len();
            for (j, &p) in probs.iter().enumerate() {
                acc += p;
                if acc >= self.cfg.top_p {
                    keep = j + 1;
                    break;
                }
            }
            probs.truncate(keep);
            idx.truncate(keep);
        }
        // The draw walks the kept candidates in id order: the logit order above only decides
        // which ones are kept. Two near-equal logits that round differently on another build
        // (glibc vs libm exp, AVX2 vs NEON sums: the firmware vs the Linux CLI) then swap places
        // without changing which token a draw picks, unless it lands right on their boundary.
        let mut kept: Vec<(u32, f32)> = idx.into_iter().zip(probs).collect();
        kept.sort_unstable_by_key(|&(id, _)| id);
        let total: f32 = kept.iter().map(|&(_, p)| p).sum();
        let mut r = self.rng.next_f32() * total;
        for &(id, p) in &kept {
            if r < p {
                return Ok(id);
            }
            r -= p;
        }
        Ok(kept[kept.len() - 1].0)
    }
}

/// Index of the largest value (the first on ties; NaN never wins; the last index when every
/// value is NaN). Two passes that vectorize — the largest value, then its first position —
/// instead of one compare-and-branch per element: greedy decode calls this on the whole
/// vocabulary every token.
pub fn argmax(v: &[f32]) -> u32 {
    const LANES: usize = 16;
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = v.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for (m, &x) in lanes.iter_mut().zip(c) {
            // `max` ignores NaN; written as a select so the loop vectorizes.
            *m = if x > *m { x } else { *m };
        }
    }
    let max = tail.iter().chain(&lanes).fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m });
    match v.iter().position(|&x| x == max) {
        Some(i) => i as u32,
        None => v.len().saturating_sub(1) as u32,
    }
}

/// O'Neill's PCG32 (XSH-RR): small, fast, and the same stream on every platform.
#[derive(Clone, Debug)]
struct Pcg32 {
    state: u64,
}

impl Pcg32 {
    const MUL: u64 = 6364136223846793005;
    const INC: u64 = 1442695040888963407;

    fn new(seed: u64) -> Pcg32 {
        let mut r = Pcg32 { state: 0 };
        r.next_u32();
        r.state = r.state.wrapping_add(seed);
        r.next_u32();
        r
    }

    fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(Self::MUL).wrapping_add(Self::INC);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        xorshifted.rotate_right((old >> 59) as u32)
    }

    /// Uniform in [0, 1).
    fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_takes_the_first_maximum_and_skips_nan() {
        let mut s = Sampler::new(SamplerConfig::default()).unwrap();
        assert_eq!(s.sample(&[0.1, 3.0, 3.0, -1.0], &[]).unwrap(), 1);
        assert_eq!(argmax(&[f32::NAN, 1.0, 0.5]), 1);
    }

    /// The one-pass definition: the first strictly larger value wins, and NaN is replaced by
    /// whatever follows it.
    fn argmax_reference(v: &[f32]) -> u32 {
        let mut best = 0usize;
        for (i, &x) in v.iter().enumerate() {
            if x > v[best] || v[best].is_nan() {
                best = i;
            }
        }
        best as u32
    }

    #[test]
    fn argmax_equals_its_one_pass_definition() {
        let mut rng = Pcg32::new(3);
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1.0];
        for n in [0usize, 1, 2, 15, 16, 17, 33, 100, 49_152] {
            for case in 0..8 {
                let v: Vec<f32> = (0..n)
                    .map(|_| {
                        let r = rng.next_u32();
                        match case {
                            0 => (r % 7) as f32, // many ties
                            1 | 2 if r % 5 == 0 => specials[(r / 5) as usize % specials.len()],
                            3 => f32::NAN,
                            4 => f32::NEG_INFINITY,
                            _ => (r as f32 / u32::MAX as f32) * 200.0 - 100.0,
                        }
                    })
                    .collect();
                assert_eq!(argmax(&v), argmax_reference(&v), "n = {n}, case {case}: {v:?}");
            }
        }
    }

    #[test]
    fn repetition_penalty_divides_positive_and_multiplies_negative_logits() {
        let cfg = SamplerConfig { repetition_penalty: 2.0, ..Default::default() };
        let mut s = Sampler::new(cfg).unwrap();
        // token 0 (logit 3) seen → 1.5 < 2 → token 1 wins.
        assert_eq!(s.sample(&[3.0, 2.0, -1.0], &[0]).unwrap(), 1);
        // token 1 seen too → 1.0; token 0 at 1.5 wins again.
        assert_eq!(s.sample(&[3.0, 2.0, -1.0], &[0, 1]).unwrap(), 0);
    }

    #[test]
    fn top_k_one_and_tiny_top_p_are_greedy() {
        let logits = [0.5, 2.0, 1.9, -3.0];
        for cfg in [
            SamplerConfig { temperature: 1.0, top_k: 1, ..Default::default() },
            SamplerConfig { temperature: 1.0, top_p: 1e-6, ..Default::default() },
            SamplerConfig { temperature: 1.0, min_p: 1.0, ..Default::default() },
        ] {
            let mut s = Sampler::new(cfg).unwrap();
            for _ in 0..50 {
                assert_eq!(s.sample(&logits, &[]).unwrap(), 1);
            }
        }
    }

    #[test]
    fn sampling_frequencies_follow_the_softmax() {
        // p = softmax([0, ln 3]) = [0.25, 0.75]; 20 000 draws: 3-sigma band is ±0.0092.
        let mut s = Sampler::new(SamplerConfig { temperature: 1.0, seed: 7, ..Default::default() }).unwrap();
        let logits = [0.0, libm::logf(3.0)];
        let n = 20_000;
        let ones = (0..n).filter(|_| s.sample(&logits, &[]).unwrap() == 1).count();
        let f = ones as f32 / n as f32;
        assert!((f - 0.75).abs() < 0.0092, "{f}");
    }

    #[test]
    fn same_seed_same_tokens_and_bad_settings_rejected() {
        let logits: Vec<f32> = (0..100).map(|i| ((i * 37) % 11) as f32 * 0.3).collect();
        let cfg = SamplerConfig { temperature: 0.8, top_p: 0.9, seed: 42, ..Default::default() };
        let run = |c: &SamplerConfig| {
            let mut s = Sampler::new(c.clone()).unwrap();
            (0..20).map(|_| s.sample(&logits, &[]).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(run(&cfg), run(&cfg));
        assert_ne!(run(&cfg), run(&SamplerConfig { seed: 43, ..cfg.clone() }));
        assert!(Sampler::new(SamplerConfig { temperature: -1.0, ..Default::default() }).is_err());
        assert!(Sampler::new(SamplerConfig { top_p: 0.0, ..Default::default() }).is_err());
        assert!(Sampler::new(SamplerConfig { min_p: 2.0, ..Default::default() }).is_err());
        let mut s = Sampler::new(SamplerConfig::default()).unwrap();
        assert!(s.sample(&[], &[]).is_err());
    }
}
