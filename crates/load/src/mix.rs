//! Request mixes: several targets, URL templates that expand per request,
//! and the order they are sent in. Real API traffic is a mix, and a mix
//! changes what a server does (caches, routing, allocation).
//!
//! Cost is the point of the layout. Every expansion of a template whose
//! placeholders have at most `PREPARE_MAX` combinations is encoded once,
//! before the run, so a request costs choosing a prepared buffer; only a
//! template with more combinations (say `{rand:1..10000000}`) is written per
//! request, and then only its digits are new. Choosing is a smooth weighted
//! round robin (nginx's: exact, deterministic, weights honoured in every
//! window) or a weighted random pick from a seeded generator, one `Picker`
//! per thread so threads share nothing.
//!
//! Templates, in a URL's path or query: `{1..100}` counts 1 to 100 and
//! starts again; `{rand:1..10000}` is a uniform random integer; `{a|b|c}` is
//! a uniform random pick from the list.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
pub use stampede_schema::mix::{Order, TargetSpec};
use stampede_spec::request;
use stampede_spec::target::Target;
pub use stampede_spec::template::expand_random;
use stampede_spec::template::{parse_template, targets, write_part, Part};
use std::sync::Arc;

/// Templates with at most this many expansions are encoded ahead.
const PREPARE_MAX: u64 = 100_000;
/// …and so are all expansions of a mix up to this many bytes in total.
const PREPARE_BYTES: usize = 64 << 20;

/// One target of a mix, ready to be sent.
#[derive(Debug)]
pub struct Template {
    /// How results name it: the method and the path template.
    pub label: String,
    pub spec: TargetSpec,
    path: Vec<Part>,
    /// Head bytes before and after the path; body after the head.
    before: Vec<u8>,
    after: Vec<u8>,
    /// Every expansion encoded, indexed by the mixed-radix number of the
    /// placeholders' values; empty when there are too many to prepare.
    prepared: Vec<Box<[u8]>>,
}

/// The targets of a run and how they are chosen.
#[derive(Debug)]
pub struct Mix {
    pub templates: Vec<Template>,
    pub order: Order,
    /// The seed of every random choice; printed, so a run can be repeated.
    pub seed: u64,
}

impl Mix {
    /// Builds the mix for targets that share `host_header` (one connection
    /// pool); `paths[i]` is target `i`'s path (and query) template.
    /// `Err((i, why))` names the target at fault.
    pub fn new(
        specs: Vec<TargetSpec>,
        order: Order,
        seed: u64,
        host_header: &str,
        paths: Vec<String>,
    ) -> Result<Mix, (usize, String)> {
        let mut templates = Vec::with_capacity(specs.len());
        for (i, (spec, path)) in specs.into_iter().zip(paths).enumerate() {
            let parts = parse_template(&path).map_err(|e| (i, e))?;
            let combos = parts.iter().try_fold(1u64, |n, p| n.checked_mul(p.count()));
            let head = request::encode(&spec.method, "\u{0}", host_header, &spec.headers, &spec.body);
            let cut = head.iter().position(|&b| b == 0).expect("the path marker");
            templates.push(Template {
                label: format!("{} {}", spec.method, path),
                before: head[..cut].to_vec(),
                after: head[cut + 1..].to_vec(),
                path: parts,
                prepared: Vec::new(),
                spec,
            });
            let t = templates.last_mut().expect("just pushed");
            if combos.is_some_and(|n| n <= PREPARE_MAX) {
                t.prepared = (0..combos.unwrap_or(0)).map(|k| t.render_index(k).into_boxed_slice()).collect();
            }
        }
        let bytes: usize = templates.iter().flat_map(|t| t.prepared.iter()).map(|b| b.len()).sum();
        if bytes > PREPARE_BYTES {
            // Too much to keep: every template is rendered per request.
            templates.iter_mut().for_each(|t| t.prepared = Vec::new());
        }
        Ok(Mix { templates, order, seed })
    }

    pub fn len(&self) -> usize {
        self.templates.len()
    }

    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }
}

/// Builds the mix of `specs`. They must share scheme, host and port (one
/// connection pool); the target returned is theirs, for connecting.
/// `Err((i, why))` names the target at fault (`stampede_spec::template::targets`).
pub fn build(specs: Vec<TargetSpec>, order: Order, seed: u64) -> Result<(Target, Mix), (usize, String)> {
    let (target, paths) = targets(&specs)?;
    let mix = Mix::new(specs, order, seed, &target.host_header, paths)?;
    Ok((target, mix))
}

impl Template {
    /// The expansion numbered `k` (mixed radix over the placeholders).
    fn render_index(&self, mut k: u64) -> Vec<u8> {
        let mut out = self.before.clone();
        for part in &self.path {
            let n = part.count();
            let digit = k % n;
            k /= n;
            write_part(&mut out, part, digit);
        }
        out.extend_from_slice(&self.after);
        out
    }

    /// The path of expansion `k`, for HTTP/2 (which sends no request line).
    pub fn path_of(&self, mut k: u64) -> String {
        let mut out = Vec::new();
        for part in &self.path {
            let n = part.count();
            write_part(&mut out, part, k % n);
            k /= n;
        }
        String::from_utf8(out).expect("templates are UTF-8")
    }
}

/// One thread's choices: which target next, and which expansion of it.
pub struct Picker {
    mix: Arc<Mix>,
    /// Smooth weighted round robin: each target's current weight.
    current: Vec<i64>,
    total: i64,
    /// Per template: how many times it was sent (drives `{a..b}` sequences).
    sent: Vec<u64>,
    rng: SmallRng,
}

impl Picker {
    /// Thread `index`'s picker: its random stream depends on the seed and
    /// the index only, so a run with the same seed repeats.
    pub fn new(mix: Arc<Mix>, index: usize) -> Picker {
        let seed = mix.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Picker {
            current: vec![0; mix.len()],
            total: mix.templates.iter().map(|t| t.spec.weight as i64).sum(),
            sent: vec![0; mix.len()],
            rng: SmallRng::seed_from_u64(seed),
            mix,
        }
    }

    pub fn mix(&self) -> &Mix {
        &self.mix
    }

    /// The next target, by the mix's order.
    pub fn next_target(&mut self) -> usize {
        let ts = &self.mix.templates;
        if ts.len() == 1 {
            return 0;
        }
        match self.mix.order {
            Order::RoundRobin => {
                let mut best = 0;
                for (i, t) in ts.iter().enumerate() {
                    self.current[i] += t.spec.weight as i64;
                    if self.current[i] > self.current[best] {
                        best = i;
                    }
                }
                self.current[best] -= self.total;
                best
            }
            Order::Random => {
                let mut x = self.rng.gen_range(0..self.total);
                for (i, t) in ts.iter().enumerate() {
                    x -= t.spec.weight as i64;
                    if x < 0 {
                        return i;
                    }
                }
                ts.len() - 1
            }
        }
    }

    /// Which expansion of target `t` to send next.
    pub fn expansion(&mut self, t: usize) -> u64 {
        let template = &self.mix.templates[t];
        let mut seq = self.sent[t];
        self.sent[t] += 1;
        let (mut k, mut stride) = (0u64, 1u64);
        for part in &template.path {
            let n = part.count();
            let digit = match part {
                Part::Lit(_) => 0,
                Part::Seq { .. } => {
                    let d = seq % n;
                    seq /= n;
                    d
                }
                Part::Rand { .. } | Part::Pick(_) => self.rng.gen_range(0..n),
            };
            k = k.wrapping_add(digit.wrapping_mul(stride));
            stride = stride.wrapping_mul(n);
        }
        k
    }

    /// Appends the next request (of target `t`) to `out`.
    #[inline]
    pub fn write(&mut self, t: usize, out: &mut Vec<u8>) {
        let k = self.expansion(t);
        let template = &self.mix.templates[t];
        match template.prepared.get(k as usize) {
            Some(bytes) => out.extend_from_slice(bytes),
            None => out.extend_from_slice(&template.render_index(k)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(url: &str, weight: u32) -> TargetSpec {
        TargetSpec { method: "GET".into(), url: url.into(), headers: vec![], body: vec![], weight }
    }

    fn mix(paths: &[(&str, u32)], order: Order) -> Arc<Mix> {
        let specs = paths.iter().map(|(p, w)| spec(p, *w)).collect();
        Arc::new(Mix::new(specs, order, 7, "h:1", paths.iter().map(|(p, _)| p.to_string()).collect()).unwrap())
    }

    fn line(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).lines().next().unwrap().to_string()
    }

    #[test]
    fn sequences_cycle_in_order_and_prepared_bytes_match_rendered_ones() {
        let m = mix(&[("/api/fib/{1..3}", 1)], Order::RoundRobin);
        let mut p = Picker::new(m.clone(), 0);
        let got: Vec<String> = (0..4)
            .map(|_| {
                let mut out = Vec::new();
                p.write(0, &mut out);
                line(&out)
            })
            .collect();
        assert_eq!(
            got,
            [
                "GET /api/fib/1 HTTP/1.1",
                "GET /api/fib/2 HTTP/1.1",
                "GET /api/fib/3 HTTP/1.1",
                "GET /api/fib/1 HTTP/1.1"
            ]
        );
        assert_eq!(m.templates[0].prepared.len(), 3);
        assert_eq!(&*m.templates[0].prepared[1], &m.templates[0].render_index(1)[..]);
    }

    #[test]
    fn smooth_round_robin_honours_weights_exactly() {
        let m = mix(&[("/a", 3), ("/b", 1)], Order::RoundRobin);
        let mut p = Picker::new(m, 0);
        let picks: Vec<usize> = (0..8).map(|_| p.next_target()).collect();
        assert_eq!(picks.iter().filter(|&&t| t == 0).count(), 6);
        assert_eq!(&picks[..4], &picks[4..], "a period of 4 repeats");
    }

    #[test]
    fn random_order_follows_weights_and_repeats_with_the_seed() {
        let m = mix(&[("/a", 3), ("/b/{rand:1..1000000}", 1)], Order::Random);
        let run = || {
            let mut p = Picker::new(m.clone(), 0);
            (0..10_000).map(|_| p.next_target()).collect::<Vec<_>>()
        };
        let a = run();
        assert_eq!(a, run(), "same seed, same sequence");
        let share = a.iter().filter(|&&t| t == 0).count() as f64 / a.len() as f64;
        assert!((share - 0.75).abs() < 0.02, "{share}");
        assert!(m.templates[1].prepared.is_empty(), "a million expansions are rendered per request");
        let mut p = Picker::new(m.clone(), 0);
        let mut out = Vec::new();
        p.write(1, &mut out);
        let n: u64 = line(&out).split(['/', ' ']).nth(3).unwrap().parse().unwrap();
        assert!((1..=1_000_000).contains(&n));
    }

    #[test]
    fn bad_templates_say_what_is_wrong() {
        for (path, want) in [
            ("/a/{1..}", "not a whole number"),
            ("/a/{5..2}", "at least LOW"),
            ("/a/{x}", "expected"),
            ("/a/{1..3", "without"),
            ("/a/{a||b}", "empty choice"),
            ("/a b", "spaces"),
        ] {
            let (_, err) = Mix::new(vec![spec(path, 1)], Order::RoundRobin, 1, "h", vec![path.into()]).unwrap_err();
            assert!(err.contains(want), "{path}: {err}");
        }
    }
}
