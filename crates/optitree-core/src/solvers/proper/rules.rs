//! Candidate splitting rules defined by the data (spec §1.3, §3.6): axis-parallel thresholds,
//! hyperplanes through `D` points, degree-`m` surfaces through `G` lifted points, and their union.
//!
//! Every rule carries its side `plus` (the rows that go left, where the rule's test is `<= 0`)
//! and its defining points `P(r)`. Invariant: the test a rule exports ([`RuleSet::test`])
//! reproduces `plus` on every training row when evaluated by the tree's own evaluator, so the
//! tree a user sees predicts exactly what the search scored.
//!
//! The defining points of a surface lie on it; which side each goes to is the rule's
//! *assignment*. All `2^G` assignments are generated (the complete list: spec §3.6), or only
//! "all left" and "all right" with [`Sides::Closed`]. An assignment is realised by tilting the
//! surface a little within its own plane (a perturbation that vanishes nowhere on the defining
//! points and is too small to move any other row).

use std::collections::HashSet;

use super::linalg;
use super::words;
use crate::error::Result;
use crate::param_err;
use crate::search::{Budget, ProgressBoard, Snapshot};
use crate::tree::{ObliqueTest, Term};

/// The data points, row-major.
#[derive(Debug, Clone)]
pub struct Points {
    n_rows: usize,
    n_features: usize,
    x: Vec<f64>,
}

impl Points {
    /// `x` holds `n_rows` rows of `n_features` finite values.
    pub fn new(n_rows: usize, n_features: usize, x: Vec<f64>) -> Result<Points> {
        if x.len() != n_rows * n_features {
            return param_err!(
                "x has {} values, expected {} rows x {} features",
                x.len(),
                n_rows,
                n_features
            );
        }
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return param_err!(
                "x[{}, {}] is {}: proper trees need finite numbers",
                i / n_features.max(1),
                i % n_features.max(1),
                x[i]
            );
        }
        Ok(Points {
            n_rows,
            n_features,
            x,
        })
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.n_features..(i + 1) * self.n_features]
    }
}

/// Which rules to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `x_d <= x_{n,d}`: one rule per (feature, row).
    Axis,
    /// Hyperplanes through `D` rows.
    Hyperplane,
    /// Degree-`degree` surfaces through `G` rows (hyperplanes in the monomial lifting).
    Polynomial,
    /// Axis ∪ hyperplane ∪ (polynomial when `degree >= 2`).
    Mixed,
}

/// Which sides the defining points of a surface may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sides {
    /// All `2^G` assignments (complete).
    All,
    /// All defining points left, or all right (complete for hyperplanes only when `D <= 2`).
    Closed,
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleSpec {
    /// The family.
    pub family: Family,
    /// Degree of polynomial surfaces (≥ 2 for `Polynomial`).
    pub degree: u32,
    /// Side assignments of defining points.
    pub sides: Sides,
}

/// How a rule's test is built.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// `x[feature] <= threshold` (the midpoint to the next larger value of the column).
    Axis { feature: usize, threshold: f64 },
    /// The degree-`degree` surface through the defining points; bit `j` of `assignment` sends
    /// defining point `j` left.
    Surface { degree: u32, assignment: u32 },
}

/// The candidate rules: sides as a flat word matrix, defining points, shapes.
#[derive(Debug, Clone)]
pub struct RuleSet {
    n_rows: usize,
    n_words: usize,
    plus: Vec<u64>,
    def_ptr: Vec<usize>,
    defining: Vec<u32>,
    shapes: Vec<Shape>,
    /// Rule generation statistics: subsets skipped as rank deficient, exact duplicates removed.
    pub rank_deficient: u64,
    /// Exact duplicates (same side, same defining points) removed.
    pub duplicates: u64,
    /// When set, only the first rule of each partition of the rows is kept (see [`generate`]).
    partitions: Option<Partitions>,
    /// Most heap bytes the set may reach, its growths included (the memory limit).
    byte_cap: Option<usize>,
    /// Whether a rule was refused because keeping it would have passed `byte_cap`.
    pub full: bool,
}

/// The partitions seen so far, each as the side that holds row 0.
#[derive(Debug, Clone)]
enum Partitions {
    /// Up to 64 rows: one word per partition.
    Word(HashSet<u64>),
    Words(HashSet<Vec<u64>>),
}

impl Partitions {
    /// Bytes a growth of the table would add while the old one is alive (its next table), if
    /// one more insertion may cause it.
    fn growth_bytes(&self) -> usize {
        let (len, capacity, per_slot) = match self {
            Partitions::Word(set) => (set.len(), set.capacity(), 9),
            Partitions::Words(set) => (set.len(), set.capacity(), 25),
        };
        if len < capacity {
            return 0;
        }
        2 * capacity.max(4) * 8 / 7 * per_slot
    }

    /// Heap bytes of the table (its slots, a control byte each, and the boxed partitions).
    fn heap_bytes(&self) -> usize {
        match self {
            Partitions::Word(set) => set.capacity() * 9,
            Partitions::Words(set) => {
                let words = set.iter().next().map_or(0, |w| w.capacity());
                set.capacity() * 25 + set.len() * words * 8
            }
        }
    }

    /// Records the partition of `side`; `false` if it was already there.
    fn insert(&mut self, side: &[u64], n_rows: usize) -> bool {
        let flip = !words::contains(side, 0);
        match self {
            Partitions::Word(set) => {
                let w = if flip {
                    !side[0] & low_bits(n_rows)
                } else {
                    side[0]
                };
                set.insert(w)
            }
            Partitions::Words(set) => {
                let mut key = side.to_vec();
                if flip {
                    for (k, w) in key.iter_mut().enumerate() {
                        *w = !*w & low_bits(n_rows.saturating_sub(64 * k).min(64));
                    }
                }
                set.insert(key)
            }
        }
    }
}

/// The capacity `v` grows to for `more` elements: at least double, as `Vec` grows.
fn doubled<T>(v: &Vec<T>, more: usize) -> usize {
    (2 * v.capacity()).max(v.len() + more).max(8)
}

/// Bytes of the new buffer if `more` elements make `v` grow (the old one is counted already).
fn grown_bytes<T>(v: &Vec<T>, more: usize) -> usize {
    if v.len() + more <= v.capacity() {
        return 0;
    }
    doubled(v, more) * std::mem::size_of::<T>()
}

/// Grows `v` for `more` elements to exactly the capacity [`grown_bytes`] counted.
fn reserve_doubling<T>(v: &mut Vec<T>, more: usize) {
    if v.len() + more > v.capacity() {
        let capacity = doubled(v, more);
        v.reserve_exact(capacity - v.len());
    }
}

/// A word with the lowest `n` (≤ 64) bits set.
fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

impl RuleSet {
    fn new(n_rows: usize) -> RuleSet {
        RuleSet {
            n_rows,
            n_words: words::count(n_rows),
            plus: Vec::new(),
            def_ptr: vec![0],
            defining: Vec::new(),
            shapes: Vec::new(),
            rank_deficient: 0,
            duplicates: 0,
            partitions: None,
            byte_cap: None,
            full: false,
        }
    }

    /// Builds a rule set from explicit sides and defining points (tests and custom rules); the
    /// shapes are thresholds on feature 0 at the rule's index.
    pub fn from_parts(n_rows: usize, rules: &[(Vec<usize>, Vec<usize>)]) -> RuleSet {
        let mut set = RuleSet::new(n_rows);
        for (k, (plus, def)) in rules.iter().enumerate() {
            let mut w = vec![0u64; set.n_words];
            for &i in plus {
                words::insert(&mut w, i);
            }
            let def: Vec<u32> = def.iter().map(|&i| i as u32).collect();
            set.push(
                &w,
                &def,
                Shape::Axis {
                    feature: 0,
                    threshold: k as f64,
                },
            );
        }
        set
    }

    fn push(&mut self, plus: &[u64], defining: &[u32], shape: Shape) {
        if self.full {
            return;
        }
        if let Some(cap) = self.byte_cap {
            // Each growth holds the old buffer and the new one: refuse the rule rather than let
            // a doubling take the set past its limit (it had reached 1.9 times it).
            let growth = grown_bytes(&self.plus, plus.len())
                + grown_bytes(&self.defining, defining.len())
                + grown_bytes(&self.def_ptr, 1)
                + grown_bytes(&self.shapes, 1)
                + self.partitions.as_ref().map_or(0, Partitions::growth_bytes);
            if self.heap_bytes() + growth > cap {
                self.full = true;
                return;
            }
            reserve_doubling(&mut self.plus, plus.len());
            reserve_doubling(&mut self.defining, defining.len());
            reserve_doubling(&mut self.def_ptr, 1);
            reserve_doubling(&mut self.shapes, 1);
        }
        if let Some(seen) = self.partitions.as_mut() {
            if !seen.insert(plus, self.n_rows) {
                self.duplicates += 1;
                return;
            }
        }
        self.plus.extend_from_slice(plus);
        self.defining.extend_from_slice(defining);
        self.def_ptr.push(self.defining.len());
        self.shapes.push(shape);
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.shapes.len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    /// Number of rows the sides range over.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Words per side.
    pub fn n_words(&self) -> usize {
        self.n_words
    }

    /// The side `r⁺` of rule `r` (rows that go left).
    #[inline]
    pub fn plus(&self, r: usize) -> &[u64] {
        &self.plus[r * self.n_words..(r + 1) * self.n_words]
    }

    /// The defining points `P(r)`.
    #[inline]
    pub fn defining(&self, r: usize) -> &[u32] {
        &self.defining[self.def_ptr[r]..self.def_ptr[r + 1]]
    }

    /// How rule `r`'s test is built.
    pub fn shape(&self, r: usize) -> Shape {
        self.shapes[r]
    }

    /// Whether every defining point of `r` lies in `mask` (the rule may be used in that region).
    #[inline]
    pub fn available(&self, r: usize, mask: &[u64]) -> bool {
        self.defining(r)
            .iter()
            .all(|&p| words::contains(mask, p as usize))
    }

    /// Keeps only the rules for which `keep` is true (order preserved).
    pub fn retain(&mut self, mut keep: impl FnMut(&RuleSet, usize) -> bool) {
        let mut out = RuleSet::new(self.n_rows);
        out.rank_deficient = self.rank_deficient;
        out.duplicates = self.duplicates;
        for r in 0..self.len() {
            if keep(self, r) {
                out.push(self.plus(r), self.defining(r), self.shapes[r]);
            }
        }
        *self = out;
    }

    /// Heap bytes held: the vectors' capacities, which run up to twice their lengths as they
    /// grow (lengths counted half of what the process held).
    pub fn heap_bytes(&self) -> usize {
        self.plus.capacity() * 8
            + self.defining.capacity() * 4
            + self.def_ptr.capacity() * 8
            + self.shapes.capacity() * std::mem::size_of::<Shape>()
            + self.partitions.as_ref().map_or(0, Partitions::heap_bytes)
    }

    /// The test of rule `r` over the original features; `<= 0` means left. Checked against
    /// `plus` on every row (the module invariant).
    pub fn test(&self, points: &Points, r: usize) -> Result<RuleTest> {
        match self.shapes[r] {
            Shape::Axis { feature, threshold } => Ok(RuleTest::Axis { feature, threshold }),
            Shape::Surface { degree, assignment } => {
                let lift = Lifting::new(points, degree);
                let def: Vec<usize> = self.defining(r).iter().map(|&p| p as usize).collect();
                let plane = Plane::through(&lift, &def).ok_or_else(|| {
                    crate::error::Error::Internal(format!("rule {r}: its surface vanished"))
                })?;
                if let Some(tilt) = plane.tilt(&lift, &def) {
                    for shrink in [1.0, 1.0 / 16.0, 1.0 / 256.0] {
                        let test = plane.tilted(&lift, &tilt, assignment, shrink);
                        let same = (0..points.n_rows()).all(|i| {
                            (test.evaluate(points.row(i)) <= 0.0)
                                == words::contains(self.plus(r), i)
                        });
                        if same {
                            return Ok(RuleTest::Oblique(test));
                        }
                    }
                }
                Err(crate::error::Error::Internal(format!(
                    "rule {r}: no floating-point surface reproduces its side on the training rows"
                )))
            }
        }
    }
}

/// A rule's test as the tree stores it.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleTest {
    /// `x[feature] <= threshold` goes left.
    Axis { feature: usize, threshold: f64 },
    /// `test(x) <= 0` goes left.
    Oblique(ObliqueTest),
}

/// The monomials of degree 1..=m over `d` features, by degree then lexicographically; each is the
/// list of its features with repetition (`[0, 0, 1]` is `x0²·x1`).
pub fn monomials(d: usize, degree: u32) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut layer: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..degree {
        let mut next = Vec::new();
        for m in &layer {
            let start = m.last().copied().unwrap_or(0);
            for f in start..d {
                let mut grown = m.clone();
                grown.push(f);
                next.push(grown);
            }
        }
        out.extend(next.iter().cloned());
        layer = next;
    }
    out
}

/// The rows in the monomial lifting `z_i = (prod of x_i over each monomial)`.
struct Lifting {
    monomials: Vec<Vec<usize>>,
    z: Vec<f64>,
    g: usize,
}

impl Lifting {
    fn new(points: &Points, degree: u32) -> Lifting {
        let monomials = monomials(points.n_features(), degree);
        let g = monomials.len();
        let mut z = Vec::with_capacity(points.n_rows() * g);
        for i in 0..points.n_rows() {
            let x = points.row(i);
            // The same product, in the same order, as the tree's evaluator.
            z.extend(
                monomials
                    .iter()
                    .map(|m| m.iter().map(|&f| x[f]).product::<f64>()),
            );
        }
        Lifting { monomials, z, g }
    }

    fn row(&self, i: usize) -> &[f64] {
        &self.z[i * self.g..(i + 1) * self.g]
    }

    fn n_rows(&self) -> usize {
        self.z.len() / self.g.max(1)
    }
}

/// A surface `w·z = b` in the lifting.
struct Plane {
    w: Vec<f64>,
    b: f64,
}

impl Plane {
    /// The surface through the lifted rows `def`, oriented so its first clearly non-zero
    /// coefficient is positive; `None` when they do not fix one surface.
    fn through(lift: &Lifting, def: &[usize]) -> Option<Plane> {
        let rows: Vec<Vec<f64>> = def
            .iter()
            .map(|&p| {
                let mut r = lift.row(p).to_vec();
                r.push(-1.0);
                r
            })
            .collect();
        let u = linalg::null_vector(rows)?;
        let (w, b) = (&u[..lift.g], u[lift.g]);
        let big = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if big.is_nan() || big <= 0.0 {
            return None;
        }
        let lead = w.iter().find(|v| v.abs() > 1e-9 * big).copied()?;
        let s = lead.signum() / big;
        Some(Plane {
            w: w.iter().map(|v| v * s).collect(),
            b: b * s,
        })
    }

    /// `w·z_i - b` and the magnitude it is relative to (for on-plane tests).
    fn value(&self, z: &[f64]) -> (f64, f64) {
        let mut v = 0.0;
        let mut mag = self.b.abs();
        for (w, z) in self.w.iter().zip(z) {
            v += w * z;
            mag += (w * z).abs();
        }
        (v - self.b, mag)
    }

    /// The in-plane perturbations that move one defining point off the surface: `h_j(z) =
    /// v_j·z − c_j` with `h_j(z_p) = δ_jp` and `v_j ⟂ w`, and the largest step `eps` such that
    /// `eps · Σ_j |h_j|` moves no other row across the surface.
    fn tilt(&self, lift: &Lifting, def: &[usize]) -> Option<Tilt> {
        let g = lift.g;
        let mut a: Vec<Vec<f64>> = Vec::with_capacity(g + 1);
        for &p in def {
            let mut r = lift.row(p).to_vec();
            r.push(-1.0);
            a.push(r);
        }
        let mut r = self.w.clone();
        r.push(0.0);
        a.push(r);
        let units: Vec<Vec<f64>> = (0..g)
            .map(|j| {
                let mut rhs = vec![0.0; g + 1];
                rhs[j] = 1.0;
                rhs
            })
            .collect();
        let mut v = Vec::with_capacity(g);
        let mut c = Vec::with_capacity(g);
        for vc in linalg::solve_many(a, units)? {
            c.push(vc[g]);
            v.push(vc[..g].to_vec());
        }
        let mut off_min = f64::INFINITY;
        let mut h_max: f64 = 1.0;
        let mut mag_max: f64 = 0.0;
        for i in 0..lift.n_rows() {
            let z = lift.row(i);
            let h: f64 = (0..g)
                .map(|j| (v[j].iter().zip(z).map(|(a, b)| a * b).sum::<f64>() - c[j]).abs())
                .sum();
            h_max = h_max.max(h);
            let (e, mag) = self.value(z);
            mag_max = mag_max.max(mag);
            if !def.contains(&i) && e.abs() > ON_PLANE * mag {
                off_min = off_min.min(e.abs());
            }
        }
        if !off_min.is_finite() {
            off_min = 1.0;
        }
        Some(Tilt {
            v,
            c,
            eps: 0.5 * off_min / h_max,
            mag_max,
        })
    }

    /// The surface tilted by `shrink · eps` so defining point `j` goes left iff bit `j` of
    /// `assignment` is set, as a tree test over the original features.
    fn tilted(&self, lift: &Lifting, tilt: &Tilt, assignment: u32, shrink: f64) -> ObliqueTest {
        let eps = shrink * tilt.eps;
        let sign = |j: usize| if assignment >> j & 1 == 1 { -1.0 } else { 1.0 };
        let g = lift.g;
        let mut terms: Vec<Term> = lift
            .monomials
            .iter()
            .enumerate()
            .map(|(k, m)| Term {
                coef: self.w[k] + eps * (0..g).map(|j| sign(j) * tilt.v[j][k]).sum::<f64>(),
                features: m.clone(),
            })
            .collect();
        let c: f64 = (0..g).map(|j| sign(j) * tilt.c[j]).sum();
        terms.push(Term {
            coef: -(self.b + eps * c),
            features: Vec::new(),
        });
        ObliqueTest { terms }
    }
}

/// See [`Plane::tilt`].
struct Tilt {
    v: Vec<Vec<f64>>,
    c: Vec<f64>,
    eps: f64,
    mag_max: f64,
}

impl Tilt {
    /// Whether the step is large against rounding, so sign bookkeeping predicts the tilted
    /// test's sides exactly.
    fn robust(&self) -> bool {
        self.eps > 1e-11 * self.mag_max
    }
}

/// Relative size of `w·z - b` below which a row counts as lying on the surface.
const ON_PLANE: f64 = 1e-9;
/// Relative distance of the nearest other row below which a surface is handled as degenerate
/// (its sides computed by evaluating the tilted test rather than by sign bookkeeping).
const NEAR_PLANE: f64 = 1e-7;

/// Binomial coefficient as a float (exact up to 2^53).
pub fn binomial(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Number of points defining a surface of `degree` over `d` features: `C(d + m, d) - 1`.
pub fn surface_points(d: usize, degree: u32) -> usize {
    (binomial(d + degree as usize, d) - 1.0).round() as usize
}

/// How many rules `spec` yields on `n` rows of `d` features, before duplicates are removed.
pub fn count(n: usize, d: usize, spec: RuleSpec) -> f64 {
    let surfaces = |degree: u32| {
        let g = surface_points(d, degree);
        let per = match spec.sides {
            Sides::All => 2f64.powi(g as i32),
            Sides::Closed => 2f64.min(2f64.powi(g as i32)),
        };
        binomial(n, g) * per
    };
    match spec.family {
        Family::Axis => (n * d) as f64,
        Family::Hyperplane => surfaces(1),
        Family::Polynomial => surfaces(spec.degree),
        Family::Mixed => {
            let poly = if spec.degree >= 2 {
                surfaces(spec.degree)
            } else {
                0.0
            };
            (n * d) as f64 + surfaces(1) + poly
        }
    }
}

/// At most how many partitions (up to swapping sides) `spec` can make of `n` rows in general
/// position: `N·D` thresholds, and Cover's `Σ_{k<=G} C(n−1, k)` per surface family.
pub fn partition_count(n: usize, d: usize, spec: RuleSpec) -> f64 {
    let cover = |degree: u32| {
        let g = surface_points(d, degree);
        (0..=g)
            .map(|k| binomial(n.saturating_sub(1), k))
            .sum::<f64>()
    };
    match spec.family {
        Family::Axis => (n * d) as f64,
        Family::Hyperplane => cover(1),
        Family::Polynomial => cover(spec.degree),
        Family::Mixed => {
            (n * d) as f64
                + cover(1)
                + if spec.degree >= 2 {
                    cover(spec.degree)
                } else {
                    0.0
                }
        }
    }
}

/// Generates the candidate rules in a fixed order: axis rules feature-major, then surfaces by
/// lexicographic defining subset and assignment. Rank-deficient subsets are skipped. Stops early
/// (returning what it has) when the budget says so. See [`remove_duplicates`].
///
/// With `distinct_partitions`, only the first rule of each partition of the rows (up to swapping
/// sides) is kept, as it is generated: enough for trees of one split, where a rule is judged by
/// its partition alone, and it keeps memory at the number of partitions (Cover's count) rather
/// than the number of rules.
pub fn generate(
    points: &Points,
    spec: RuleSpec,
    distinct_partitions: bool,
    budget: &Budget,
) -> Result<RuleSet> {
    generate_reporting(points, spec, distinct_partitions, budget, None)
}

/// [`generate`], posting its progress on `board` (phase `"rules"`) as it goes.
pub fn generate_reporting(
    points: &Points,
    spec: RuleSpec,
    distinct_partitions: bool,
    budget: &Budget,
    board: Option<&ProgressBoard>,
) -> Result<RuleSet> {
    let mut set = RuleSet::new(points.n_rows());
    set.byte_cap = budget.memory_limit();
    if distinct_partitions {
        set.partitions = Some(if set.n_words <= 1 {
            Partitions::Word(HashSet::new())
        } else {
            Partitions::Words(HashSet::new())
        });
    }
    if matches!(spec.family, Family::Axis | Family::Mixed) {
        axis_rules(points, &mut set);
    }
    if matches!(spec.family, Family::Hyperplane | Family::Mixed) {
        surface_rules(points, 1, spec.sides, &mut set, budget, board);
    }
    let poly =
        spec.family == Family::Polynomial || (spec.family == Family::Mixed && spec.degree >= 2);
    if poly {
        if spec.degree < 2 {
            return param_err!("degree={} for polynomial rules: use 2 or more", spec.degree);
        }
        surface_rules(points, spec.degree, spec.sides, &mut set, budget, board);
    }
    set.partitions = None;
    if set.full {
        // A rule was refused at the memory limit: the solve stops there (the limit is what
        // the check sees as exceeded).
        budget.check(0, usize::MAX);
    }
    Ok(set)
}

/// Removes exact duplicates (same side and same defining points), keeping the first. They are
/// interchangeable except as the degenerate padding split below their twin, which only exactly-K
/// trees with empty leaves allowed can use.
///
/// Only rules with one defining row can repeat: surfaces through different rows differ in their
/// defining rows, and the assignments of one surface differ in their sides.
pub fn remove_duplicates(set: &mut RuleSet) {
    let mut seen: HashSet<(Vec<u64>, Vec<u32>)> = HashSet::new();
    let mut dropped = 0;
    let mut keep = vec![true; set.len()];
    for (r, k) in keep.iter_mut().enumerate() {
        if set.defining(r).len() > 1 {
            continue;
        }
        let mut def = set.defining(r).to_vec();
        def.sort_unstable();
        if !seen.insert((set.plus(r).to_vec(), def)) {
            *k = false;
            dropped += 1;
        }
    }
    if dropped > 0 {
        // A retain copies every rule: millions of surfaces, none of which can repeat.
        set.retain(|_, r| keep[r]);
    }
    set.duplicates += dropped;
}

/// One rule per (feature, row): `x_d <= x_{n,d}`, exported at the midpoint to the column's next
/// larger value so that it generalises like a threshold learner's split.
fn axis_rules(points: &Points, set: &mut RuleSet) {
    let n = points.n_rows();
    for f in 0..points.n_features() {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| points.row(a)[f].total_cmp(&points.row(b)[f]));
        // Side of each distinct value: the rows up to its last occurrence in sorted order.
        let mut side_of_rank: Vec<(f64, f64, Vec<u64>)> = Vec::new();
        let mut acc = vec![0u64; set.n_words];
        let mut k = 0;
        while k < n {
            let v = points.row(order[k])[f];
            while k < n && points.row(order[k])[f] == v {
                words::insert(&mut acc, order[k]);
                k += 1;
            }
            let threshold = match order.get(k).map(|&i| points.row(i)[f]) {
                Some(next) => {
                    let mid = v + (next - v) / 2.0;
                    if mid > v && mid < next {
                        mid
                    } else {
                        v
                    }
                }
                None => v,
            };
            side_of_rank.push((v, threshold, acc.clone()));
        }
        for i in 0..n {
            let v = points.row(i)[f];
            let pos = side_of_rank.partition_point(|(u, _, _)| *u < v);
            let (_, threshold, plus) = &side_of_rank[pos];
            set.push(
                plus,
                &[i as u32],
                Shape::Axis {
                    feature: f,
                    threshold: *threshold,
                },
            );
        }
    }
}

/// Row evaluations and rule words written between two looks at the budget while surfaces are
/// generated (a few milliseconds).
const CHECK_EVERY_WORK: usize = 1 << 20;

/// Surfaces of `degree` through every `G`-subset of rows, with their side assignments.
fn surface_rules(
    points: &Points,
    degree: u32,
    sides: Sides,
    set: &mut RuleSet,
    budget: &Budget,
    board: Option<&ProgressBoard>,
) {
    let lift = Lifting::new(points, degree);
    let g = lift.g;
    let n = points.n_rows();
    if g == 0 || g > n || g > 31 {
        return;
    }
    let assignments: Vec<u32> = match sides {
        Sides::All => (0..(1u32 << g)).collect(),
        Sides::Closed => vec![(1u32 << g) - 1, 0],
    };
    let mut def: Vec<usize> = (0..g).collect();
    let mut base = vec![0u64; set.n_words];
    let mut plus = vec![0u64; set.n_words];
    let mut visited: u64 = 0;
    // Saturating: a count past 2^64 subsets is only ever shown, never reached.
    let subsets = binomial(n, g) as u64;
    // Budget checks by work done, not by subsets: a subset of g rows makes up to 2^g rules
    // (4,096 subsets of ten features made four million rules between two checks), each
    // evaluated on every row when the surface is degenerate.
    let mut work = 0usize;
    loop {
        visited += 1;
        if work >= CHECK_EVERY_WORK {
            work = 0;
            if let Some(board) = board {
                board.post(Snapshot {
                    iterations: visited,
                    expansions: subsets,
                    lower_bound: 0.0,
                    upper_bound: f64::INFINITY,
                    cached: set.len() as u64,
                    memory_bytes: set.heap_bytes() as u64,
                    seconds: budget.elapsed(),
                    phase: "rules",
                });
            }
            if set.full || budget.check(0, set.heap_bytes()).is_some() {
                return;
            }
        }
        let def32: Vec<u32> = def.iter().map(|&p| p as u32).collect();
        work += n;
        match Plane::through(&lift, &def) {
            None => set.rank_deficient += 1,
            Some(plane) => {
                base.iter_mut().for_each(|w| *w = 0);
                let mut clean = true;
                for i in 0..n {
                    let (e, mag) = plane.value(lift.row(i));
                    let on = e.abs() <= ON_PLANE * mag;
                    let is_def = def.contains(&i);
                    if on != is_def || (!is_def && e.abs() <= NEAR_PLANE * mag) {
                        clean = false;
                        break;
                    }
                    if !is_def && e < 0.0 {
                        words::insert(&mut base, i);
                    }
                }
                let tilt = plane.tilt(&lift, &def);
                if !tilt.as_ref().is_some_and(Tilt::robust) {
                    clean = false;
                }
                let mut seen: HashSet<Vec<u64>> = HashSet::new();
                let per_rule = if clean { set.n_words } else { set.n_words + n };
                work += assignments.len() * per_rule;
                for &a in &assignments {
                    if clean {
                        plus.copy_from_slice(&base);
                        for (j, &p) in def.iter().enumerate() {
                            if a >> j & 1 == 1 {
                                words::insert(&mut plus, p);
                            }
                        }
                    } else {
                        // Degenerate: the side is whatever the tilted test says.
                        let Some(tilt) = tilt.as_ref() else {
                            continue;
                        };
                        let test = plane.tilted(&lift, tilt, a, 1.0);
                        plus.iter_mut().for_each(|w| *w = 0);
                        for i in 0..n {
                            if test.evaluate(points.row(i)) <= 0.0 {
                                words::insert(&mut plus, i);
                            }
                        }
                        if !seen.insert(plus.clone()) {
                            continue;
                        }
                    }
                    set.push(
                        &plus,
                        &def32,
                        Shape::Surface {
                            degree,
                            assignment: a,
                        },
                    );
                }
            }
        }
        if !next_combination(&mut def, n) {
            return;
        }
    }
}

/// Advances `c` (strictly increasing indices below `n`) to the next combination in
/// lexicographic order; `false` after the last.
pub fn next_combination(c: &mut [usize], n: usize) -> bool {
    let k = c.len();
    let mut i = k;
    while i > 0 {
        i -= 1;
        if c[i] < n - k + i {
            c[i] += 1;
            for j in i + 1..k {
                c[j] = c[j - 1] + 1;
            }
            return true;
        }
    }
    false
}
