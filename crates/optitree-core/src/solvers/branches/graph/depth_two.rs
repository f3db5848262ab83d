//! The exact solver for nodes with two levels of depth left.
//!
//! Where depth is limited, most expansions are of such nodes (73% on tic-tac-toe at depth 6,
//! 86% on kr-vs-kp at depth 4), and each made a node of every child of every useful split, only
//! to look one level ahead on some of them. Solving them outright counts the same tables
//! without the nodes: the splits in decreasing order of their one-level bound, each child's
//! exact value from its counts (the heaviest child's counts by subtraction), until no split left
//! can beat the best tree found. The best tree of depth two is then kept as a record of its
//! features ([`Graph::depth_two_tree`]). With two classes, unweighted rows and fewer than
//! [`SIMILAR_FEATURES`] binary features, the counts come from pairs of features instead
//! (`pair_counts.rs`).

use super::*;

/// Counting work (features² × row words × classes) above which a node with two levels left is
/// expanded as any other, so that the search looks at its limits between the steps: wide
/// numeric data make thousands of features, and solving one node outright could take minutes.
const MOST_WORK: u64 = 1 << 26;

/// Row words, or features, from which a node's children bound one another within a solve
/// (see [`Graph::bound_siblings_in_node`]). Updating the bounds costs about as much as
/// solving a child on few rows, and few features rarely bound one another: tic-tac-toe (27
/// features, small nodes) at depth 6 took 10% longer with it, monk2 and balance 5-10%;
/// mushroom (117 features) at depth 3 takes 20% less, kr-vs-kp (73) at depth 4 15% less, and
/// wine's 1,200 thresholds at depth 3 take 0.66 s instead of 4.1 s. Binary features of two
/// classes are solved from pair counts below `SIMILAR_FEATURES` whatever the rows
/// (`pair_counts`: kr-vs-kp's nodes, 50 words and fewer than 64 features left, at depth 4 in
/// 10.5 ms instead of 15.3); at or above it the bounds skip more splits than pairs save
/// (mushroom-f at depth 3 took 10% longer with pairs of up to 80 features).
const SIMILAR_WORDS: usize = 16;
pub(super) const SIMILAR_FEATURES: usize = 64;

/// Row words from which a solve takes counts from its solved children ([`Pairs`]): on fewer,
/// counting costs less than copying (wine's 1,200 thresholds over 3 words took 15% longer
/// at depth 3, monk2 and tic-tac-toe a few percent).
const PAIR_WORDS: usize = 16;

/// Most counts kept for the children solved in one solve ([`Pairs`]): 32 MB. Wide numeric
/// data (1,200 thresholds make tables of 7,200 counts) keep those of the first few hundred
/// splits tried.
const MOST_KEPT: usize = 1 << 22;

/// The counts of the children solved so far in one solve, so that a later split's child takes
/// its counts on their features from them instead of counting them: splitting on `f` then
/// `g`, the child `f = v` meets `g = w` in the rows that the child `g = w` meets `f = v`, and
/// when `f` and `g` are binary, the other values' counts follow by subtraction from the
/// child's. Of a solve that tries most of its splits, half the counting goes.
#[derive(Default)]
pub(super) struct Pairs {
    /// Whether this solve's rows span enough words ([`PAIR_WORDS`]).
    on: bool,
    /// Per feature: where its solved child's table starts in `tables` and that child's value,
    /// or `NONE` (not a binary split solved in this solve).
    solved: Vec<(u32, u32)>,
    tables: Vec<u64>,
    /// The features a child's counts are counted on, and those taken from `tables`.
    counted: Vec<u32>,
    derived: Vec<u32>,
}

impl Pairs {
    /// Heap bytes of its buffers.
    pub(super) fn heap_bytes(&self) -> usize {
        self.solved.capacity() * 8
            + self.tables.capacity() * 8
            + self.counted.capacity() * 4
            + self.derived.capacity() * 4
    }

    /// Splits `pool` into the features to count and those to derive.
    fn split(&mut self, pool: &[u32]) {
        self.counted.clear();
        self.derived.clear();
        for &g in pool {
            match self.solved[g as usize].0 {
                NONE => self.counted.push(g),
                _ => self.derived.push(g),
            }
        }
    }

    /// Keeps the counts `table` of the child `f = v` of a binary split, room permitting.
    fn keep(&mut self, f: u32, v: usize, table: &[u64]) {
        if self.tables.len() + table.len() <= MOST_KEPT {
            self.solved[f as usize] = (self.tables.len() as u32, v as u32);
            self.tables.extend_from_slice(table);
        }
    }

    /// Forgets the previous solve's children (of features `pool`).
    fn clear(&mut self, pool: &[u32], n_features: usize) {
        self.solved.resize(n_features, (NONE, NONE));
        pool.iter()
            .for_each(|&f| self.solved[f as usize] = (NONE, NONE));
        self.tables.clear();
    }
}

impl<S: Score> Graph<'_, S> {
    /// Solves node `id`, which has two levels of depth left, exactly: its bounds meet at the
    /// best tree of depth at most two, recorded as its incumbent, and its counts are cached as
    /// an expanded node's are (its siblings' similarity bound reads them). Returns false, doing
    /// nothing, when that would take more than [`MOST_WORK`] counting.
    pub(super) fn solve_depth_two(&mut self, id: NodeId) -> bool {
        debug_assert_eq!(self.nodes[id as usize].depth_left(), 2);
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut rows = std::mem::replace(&mut scratch.rows, Bitset::empty(0));
        self.rows_into(id, &mut rows);
        let mut pool = std::mem::take(&mut scratch.pool);
        pool.clear();
        self.pool_of_expansion_into(self.nodes[id as usize].origin.0, &mut pool);
        let k = self.data.n_classes() as u64;
        let work = (pool.len() as u64).pow(2) * rows.words().len() as u64 * k;
        if work > MOST_WORK {
            (scratch.rows, scratch.pool) = (rows, pool);
            self.scratch = scratch;
            return false;
        }
        let totals = self.class_totals(&rows);
        let words = rows.words().iter().filter(|&&w| w != 0).count();
        // Pairs of few features cost less to count than any bound saves (see `pair_counts`);
        // with many, splits bound one another, and their pair matrix would be large.
        let by_pairs = pool.len() < SIMILAR_FEATURES && self.can_solve_by_pairs(&pool);
        scratch.similar = !by_pairs
            && self.limits.min_samples_leaf <= 1
            && (words >= SIMILAR_WORDS || pool.len() >= SIMILAR_FEATURES);
        scratch.pairs.on = !by_pairs && words >= PAIR_WORDS;
        let mut table = std::mem::take(&mut scratch.table);
        if by_pairs {
            let pairs = &mut scratch.pair_counts;
            self.counting_work += pairs.count(self.data, &rows, &pool, &totals);
            pairs.fill_table(&pool, &self.offsets, &mut table);
        } else {
            scratch.counter.reset(self.data, &rows);
            self.count_table(&rows, &scratch.counter, &totals, &pool, &mut table);
        }
        let (best, root) =
            self.best_of_depth_two(&rows, &table, &totals, &pool, by_pairs, &mut scratch);
        let picks = &scratch.best_picks;
        let node = &mut self.nodes[id as usize];
        node.tightened = true;
        node.incumbent = if root == NONE || picks.iter().all(|&g| g == NONE) {
            root // the leaf, or a one-split tree
        } else {
            node.top = self.two_level.len() as u32;
            self.two_level.push(root);
            picks.iter().for_each(|&g| _ = self.two_level.push(g));
            DEPTH_TWO
        };
        let bounds = &mut self.bounds[id as usize];
        debug_assert!(
            bounds.lb <= best && best <= bounds.ub,
            "the exact value within its bounds"
        );
        (bounds.lb, bounds.ub) = (best, best);
        scratch.table = scratch.tables.put(id, table);
        (scratch.rows, scratch.pool) = (rows, pool);
        self.scratch = scratch;
        self.depth_two_solved += 1;
        true
    }

    /// The best tree of depth at most two over `rows` (class `totals`, child counts `table`
    /// over `pool`): its score and its split's feature (`NONE` for the leaf), with the feature
    /// of each child's split (`NONE` for a leaf) left in `scratch.best_picks`.
    fn best_of_depth_two(
        &mut self,
        rows: &Bitset,
        table: &[u64],
        totals: &[u64],
        pool: &[u32],
        by_pairs: bool,
        scratch: &mut Scratch<S>,
    ) -> (S, u32) {
        let k = self.data.n_classes();
        let cost = self.scale.split_cost;
        let leaf = self.scale.leaf(totals.iter().copied().max().unwrap_or(0));
        let (mut best, mut root) = (leaf, NONE);
        scratch.best_picks.clear();
        // Each usable split with its one-level bound, and each child's bound (its cell's index
        // in `child_ubs`); the best one-split tree on the way.
        scratch.ranked.clear();
        scratch.child_ubs.clear();
        if !by_pairs {
            (scratch.child_ubs).resize(table.len() / (k + 1), S::default());
        }
        for &f in pool {
            let range = self.offsets[f as usize]..self.offsets[f as usize + 1];
            let cells = &table[range.clone()];
            let Some((bound, as_leaves)) = self.split_sums(cells, 1) else {
                continue;
            };
            // (Read only by the splits solved from tables.)
            if !by_pairs {
                for (v, cell) in cells.chunks_exact(k + 1).enumerate() {
                    let child = self.summary(&cell[..k]);
                    scratch.child_ubs[range.start / (k + 1) + v] = self.summary_bounds(&child, 1).0;
                }
            }
            if as_leaves - cost > best {
                (best, root) = (as_leaves - cost, f);
                scratch.best_picks.clear();
                scratch.best_picks.resize(cells.len() / (k + 1), NONE);
            }
            scratch.ranked.push((bound - cost, f));
        }
        if scratch.pairs.on {
            scratch.pairs.clear(pool, self.data.n_features());
        }
        // Largest bound first; ties by feature, so the result does not depend on the sort.
        scratch
            .ranked
            .sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for i in 0..scratch.ranked.len() {
            let (first_bound, f) = scratch.ranked[i];
            if first_bound <= best {
                break;
            }
            let value = if by_pairs {
                let pairs = &mut scratch.pair_counts;
                self.split_by_pairs(pairs, pool, f, best, &mut scratch.picks)
            } else {
                // The children's bounds, lowered since by the splits solved before (see below).
                let at = self.offsets[f as usize] / (k + 1);
                let n_values = self.data.n_values(f as usize);
                let bound = scratch.child_ubs[at..at + n_values]
                    .iter()
                    .copied()
                    .sum::<S>()
                    - cost;
                if bound <= best {
                    continue;
                }
                scratch.later = i + 1;
                self.split_of_depth_two(rows, table, pool, f, bound, best, scratch)
            };
            if let Some(value) = value {
                (best, root) = (value, f);
                std::mem::swap(&mut scratch.best_picks, &mut scratch.picks);
            }
        }
        (best, root)
    }

    /// The value of splitting `rows` on `f` with each child's best tree of depth at most one,
    /// if it beats `best` (its children's features then in `scratch.picks`); `bound` is the
    /// split's bound, which the children solved so far tighten as they go.
    #[allow(clippy::too_many_arguments)]
    fn split_of_depth_two(
        &mut self,
        rows: &Bitset,
        table: &[u64],
        pool: &[u32],
        f: u32,
        bound: S,
        best: S,
        scratch: &mut Scratch<S>,
    ) -> Option<S> {
        let k = self.data.n_classes();
        let cells = &table[self.offsets[f as usize]..self.offsets[f as usize + 1]];
        let weight = |v: usize| cells[v * (k + 1)..][..k].iter().sum::<u64>();
        let n_values = cells.len() / (k + 1);
        let heaviest = (0..n_values)
            .max_by_key(|&v| (weight(v), std::cmp::Reverse(v)))
            .unwrap_or(0);
        let at = self.offsets[f as usize] / (k + 1);
        // The split's value so far, and its bound: solved children exactly, others by theirs.
        let (mut value, mut bound) = (-self.scale.split_cost, bound);
        scratch.picks.clear();
        scratch.picks.resize(n_values, NONE);
        // The heaviest child's counts are the node's less the others': it comes last. Split
        // in two, it is solved from the node's counts less the other child's as it reads
        // them, unless they are wanted whole to bound the siblings (copying the node's table
        // and subtracting a child's had been a fifth of tic-tac-toe's expansion time).
        let read_as_difference = n_values == 2 && !scratch.similar;
        let mut heavy = std::mem::take(&mut scratch.heavy);
        if !read_as_difference {
            heavy.clear();
            heavy.extend_from_slice(table);
        }
        let mut child_table = std::mem::take(&mut scratch.child_table);
        let mut beaten = false;
        for v in (0..n_values).filter(|&v| v != heaviest) {
            let cell = &cells[v * (k + 1)..][..k + 1];
            if cell[k] == 0 {
                continue; // empty: worth nothing, bounded by nothing
            }
            rows.and_into(self.data.rows_with(f as usize, v), &mut scratch.child_rows);
            scratch.counter.reset(self.data, &scratch.child_rows);
            let (child_rows, counter, totals) = (&scratch.child_rows, &scratch.counter, &cell[..k]);
            if scratch.pairs.on {
                let pairs = &mut scratch.pairs;
                pairs.split(pool);
                self.count_table(
                    child_rows,
                    counter,
                    totals,
                    &pairs.counted,
                    &mut child_table,
                );
                self.derive_counts(f, v, (totals, cell[k]), pairs, &mut child_table);
                if n_values == 2 {
                    pairs.keep(f, v, &child_table);
                }
            } else {
                self.count_table(child_rows, counter, totals, pool, &mut child_table);
            }
            if !read_as_difference {
                for &g in pool {
                    let range = self.offsets[g as usize]..self.offsets[g as usize + 1];
                    (heavy[range.clone()].iter_mut())
                        .zip(&child_table[range])
                        .for_each(|(h, x)| *h -= x);
                }
            }
            let (child_value, pick) = self.best_of_depth_one(&child_table, None, &cell[..k], pool);
            self.bound_siblings_in_node(table, &child_table, best, child_value, scratch);
            (value, bound) = (
                value + child_value,
                bound - scratch.child_ubs[at + v] + child_value,
            );
            scratch.picks[v] = pick;
            if bound <= best {
                beaten = true;
                break;
            }
        }
        if !beaten {
            let cell = &cells[heaviest * (k + 1)..][..k + 1];
            let (child_value, pick) = match read_as_difference {
                true => self.best_of_depth_one(table, Some(&child_table), &cell[..k], pool),
                false => {
                    let solved = self.best_of_depth_one(&heavy, None, &cell[..k], pool);
                    self.bound_siblings_in_node(table, &heavy, best, solved.0, scratch);
                    solved
                }
            };
            self.counting_work += (pool.len() * k) as u64;
            value += child_value;
            scratch.picks[heaviest] = pick;
        }
        (scratch.heavy, scratch.child_table) = (heavy, child_table);
        Some(value).filter(|&v| !beaten && v > best)
    }

    /// Fills the counts of the child `f = v` (class `totals`, which weigh its rows, and its
    /// row `count`) on the features of `pairs.derived`, binary splits solved earlier in this
    /// solve, from their solved children's counts on `f` (see [`Pairs`]).
    fn derive_counts(
        &self,
        f: u32,
        v: usize,
        (totals, count): (&[u64], u64),
        pairs: &Pairs,
        table: &mut [u64],
    ) {
        let k = self.data.n_classes();
        let theirs = self.offsets[f as usize] + v * (k + 1);
        for &g in &pairs.derived {
            let (start, w) = pairs.solved[g as usize];
            // The rows of the child g = w with f = v are this child's with g = w.
            let met = &pairs.tables[start as usize + theirs..][..k + 1];
            let cells = &mut table[self.offsets[g as usize]..self.offsets[g as usize + 1]];
            let (ours, other) = match w {
                0 => cells.split_at_mut(k + 1),
                _ => {
                    let (other, ours) = cells.split_at_mut(k + 1);
                    (ours, other)
                }
            };
            ours.copy_from_slice(met);
            for j in 0..k {
                other[j] = totals[j] - met[j];
            }
            other[k] = count - met[k];
        }
    }

    /// The similarity bound among the node's children (see [`Graph::bound_from_child`]): a
    /// child `Y` of a split, solved exactly (`value`, counts `child_table`), bounds every
    /// child `X` of the node's other splits by its value plus `X`'s weight outside `Y`,
    /// lowering `scratch.child_ubs`; a split whose children are all bounded so may then be
    /// skipped (wine's thresholds at depth 3, 1,200 of them in nested chains, mostly are).
    /// Only the splits still to be tried are bounded: those ranked after the one solved
    /// (`scratch.later` on) whose first bound beats `best` (the solve reads no other split's
    /// bounds again; bounding every split was a tenth of kr-vs-kp's search at depth 4).
    /// Only where `scratch.similar` says it pays, and never under a minimum leaf size.
    fn bound_siblings_in_node(
        &self,
        table: &[u64],
        child_table: &[u64],
        best: S,
        value: S,
        scratch: &mut Scratch<S>,
    ) {
        if !scratch.similar {
            return;
        }
        let k = self.data.n_classes();
        for j in scratch.later..scratch.ranked.len() {
            let (first_bound, g) = scratch.ranked[j];
            if first_bound <= best {
                break;
            }
            let range = self.offsets[g as usize]..self.offsets[g as usize + 1];
            for at in range.step_by(k + 1) {
                let bound = self.bound_through(value, table, child_table, at);
                let ub = &mut scratch.child_ubs[at / (k + 1)];
                *ub = (*ub).min(bound);
            }
        }
    }

    /// The best tree of depth at most one over rows of class `totals` with child counts
    /// `table` over `pool`, less the counts of `minus` if given (the node's table less its
    /// other child's): its score and its split's feature (`NONE` for the leaf). Its children
    /// are leaves, so a split is worth the sum of their majorities.
    fn best_of_depth_one(
        &self,
        table: &[u64],
        minus: Option<&[u64]>,
        totals: &[u64],
        pool: &[u32],
    ) -> (S, u32) {
        let majority = totals.iter().copied().max().unwrap_or(0);
        let leaf = self.scale.leaf(majority);
        if self.closed(&self.summary(totals), 1) {
            return (leaf, NONE);
        }
        // The loop over the features unrolled for two or three classes, chosen once.
        let (best, stump) = match (self.data.n_classes(), minus) {
            (2, None) => self.best_stump::<2, false>(table, &[], pool, majority),
            (2, Some(m)) => self.best_stump::<2, true>(table, m, pool, majority),
            (3, None) => self.best_stump::<3, false>(table, &[], pool, majority),
            (3, Some(m)) => self.best_stump::<3, true>(table, m, pool, majority),
            (_, None) => self.best_stump::<0, false>(table, &[], pool, majority),
            (_, Some(m)) => self.best_stump::<0, true>(table, m, pool, majority),
        };
        // The split pays off only if it classifies a split's worth more rows than the leaf.
        let value = self.scale.leaf(best) - self.scale.split_cost;
        match stump {
            g if g != NONE && value > leaf => (value, g),
            _ => (leaf, NONE),
        }
    }

    /// The split of `pool` whose children, as leaves, classify the most rows correctly, if
    /// more than `majority` (else `NONE`), with that number: from `table`, less `minus` when
    /// `MINUS`; for `K` classes (any number when `K` is 0).
    #[inline(always)]
    fn best_stump<const K: usize, const MINUS: bool>(
        &self,
        table: &[u64],
        minus: &[u64],
        pool: &[u32],
        majority: u64,
    ) -> (u64, u32) {
        let k = if K == 0 { self.data.n_classes() } else { K };
        let (mut best, mut stump) = (majority, NONE);
        for &g in pool {
            let range = self.offsets[g as usize]..self.offsets[g as usize + 1];
            let cells = &table[range.clone()];
            let less = if MINUS { &minus[range] } else { &[][..] };
            let correct = Self::stump_correct::<K, MINUS>(cells, less, k);
            // Only a split that classifies more rows can beat the best so far.
            if correct > best && self.stump_usable(cells, less) {
                (best, stump) = (correct, g);
            }
        }
        (best, stump)
    }

    /// The rows a split's children classify correctly as leaves, from its `cells` (less
    /// `minus` when `MINUS`), for `K` classes (`k` when `K` is 0; the inner loop of a
    /// depth-two solve, unrolled for few classes).
    fn stump_correct<const K: usize, const MINUS: bool>(
        cells: &[u64],
        minus: &[u64],
        k: usize,
    ) -> u64 {
        let k = if K == 0 { k } else { K };
        let less = |i: usize| if MINUS { minus[i] } else { 0 };
        (0..cells.len() / (k + 1))
            .map(|v| {
                let at = v * (k + 1);
                (at..at + k).map(|i| cells[i] - less(i)).max().unwrap_or(0)
            })
            .sum()
    }

    /// Whether the split of these `cells` (less `minus` unless it is empty) may be used
    /// ([`Usable::Yes`]).
    pub(super) fn stump_usable(&self, cells: &[u64], minus: &[u64]) -> bool {
        let k = self.data.n_classes();
        let less = |i: usize| minus.get(i).copied().unwrap_or(0);
        let (mut non_empty, mut too_small) = (0, false);
        let (mut weight, mut largest) = (0, 0);
        for at in (0..cells.len()).step_by(k + 1) {
            let w = (at..at + k).map(|i| cells[i] - less(i)).sum::<u64>();
            let rows = cells[at + k] - less(at + k);
            non_empty += usize::from(rows > 0);
            too_small |= rows > 0 && rows < self.limits.min_samples_leaf;
            (weight, largest) = (weight + w, largest.max(w));
        }
        self.usable(non_empty, too_small, weight, largest) == Usable::Yes
    }

    /// The tree [`Graph::solve_depth_two`] recorded for a node whose incumbent is
    /// [`DEPTH_TWO`]: its split's feature, and per value the feature of the child's split
    /// (`NONE` for a leaf).
    pub fn depth_two_tree(&self, id: NodeId) -> Option<(u32, Vec<u32>)> {
        let node = &self.nodes[id as usize];
        if node.expanded || node.incumbent != DEPTH_TWO {
            return None;
        }
        let at = node.top as usize;
        let root = *self.two_level.get(at)?;
        let picks = (0..self.data.n_values(root as usize))
            .map(|v| self.two_level.get(at + 1 + v).copied().unwrap_or(NONE))
            .collect();
        Some((root, picks))
    }
}
