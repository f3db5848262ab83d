//! The AND/OR graph the Branches search explores: one OR node per subproblem (a row set, plus the
//! remaining depth when a depth limit is set), one AND record per useful split of it.
//!
//! Subproblems are keyed by their exact row set. Without a depth limit the best subtree of a node
//! depends on its rows alone: a feature already used above is constant on those rows, so
//! splitting on it again is useless (see the spec, §8), and the useful splits are the same for
//! every path that reaches the same rows. With a depth limit the key adds the remaining depth.
//!
//! Row sets are stored only for expanded nodes, in a list of their own ([`Expansion`]). Every
//! other node remembers its origin (the expansion of the parent that created it, the feature and
//! the value), so its rows are one AND away: when it is expanded, and when a memo lookup must
//! check a hash match exactly (the memo is a [`TaggedIds`] table). Children that are
//! closed at sight (empty, out of depth, or whose leaf the purification bound proves optimal) are
//! not nodes at all: their split record keeps just their weight and majority weight.
//!
//! Invariants:
//! - `ub >= optimum >= lb` for every node and child summary; `ub` never increases and `lb` never
//!   decreases;
//! - a node is `complete` exactly when `ub == lb`, and then `best` describes an optimal subtree;
//! - a split is dropped only when its upper bound cannot beat the node's incumbent, so the
//!   node's upper bound (the best kept split or the leaf) stays admissible.

use crate::data::{Bitset, Dataset, SubsetCounter};
use crate::search::cache::{FastHasher, FastMap};
use crate::search::{prefetch, Arena, TaggedIds};
use std::hash::Hasher;

use super::score::{Scale, Score};
pub use super::splits::{Slot, Splits};
use super::tables::TableCache;

mod depth_two;
mod pair_counts;

/// Index of a node in the arena.
pub type NodeId = u32;
/// Marks "no split" in `best`/`top`, "not built yet" in child slots and the end of hash chains.
pub const NONE: u32 = u32::MAX;
/// Without a depth limit, the fewest features from which expanded children bound their
/// siblings ([`Graph::bound_from_child`]): mushroom (117 one-hot features) expands 577 nodes
/// with it instead of 816 (100 ms instead of 123), but kr-vs-kp (73) gained 1% of its
/// expansions and took 8% longer, tic-tac-toe (27) 6% and monk2 (17) 20%.
const SIMILAR_FEATURES: usize = 100;
/// The same with a depth limit, where bounds fall faster: zoo (36 columns) at depth 4 takes
/// a third less time with it and lymph (59) half, but it cost tic-tac-toe (27) at depth 6 9%
/// (1% fewer expansions), monk2-f (11) at depth 9 12%, balance (20) and careval (21) 2-8%.
/// Columns, not distinct splits: zoo's 36 columns make 21, as many as careval's 21.
pub(super) const SIMILAR_FEATURES_LIMITED: usize = 32;
/// The incumbent of a node solved outright with two levels of depth left (see
/// [`Graph::depth_two_tree`]; its `top` then indexes the tree's record).
const DEPTH_TWO: u32 = NONE - 1;

/// A subproblem known by its counts only: a child of a split before it is given a node.
#[derive(Debug, Clone, Copy)]
pub struct Summary<S> {
    /// Total weight of the rows.
    pub weight: u64,
    /// Weight of the majority class.
    pub majority: u64,
    /// Upper bound on any tree that splits the rows ([`Scale::split_bound`]).
    pub split: S,
}

/// What a node keeps once it is expanded (the root from the start), in a list apart from the
/// nodes: most nodes are never expanded, so the nodes stay small, and a memo lookup checks a
/// candidate against its parent's rows without touching the parent node (the short list of
/// expansions stays in cache where the arena of nodes does not).
#[derive(Debug)]
pub struct Expansion {
    /// The node's rows.
    pub support: Bitset,
    /// The features that can split some subset of its rows (see [`Usable::Never`]); its
    /// children need look at no others. Empty until the node is expanded.
    features: FeatureSet,
    /// Its splits (none until it is expanded). Here rather than in the node, since most nodes
    /// never get any: a node stays small (32 bytes).
    splits: Splits,
}

/// An OR node: a subproblem that may still be split.
#[derive(Debug)]
pub struct Node<S> {
    /// Index of its rows, features and splits in the graph's list of [`Expansion`]s once expanded
    /// (the root always has them), `NONE` before.
    pub expansion: u32,
    /// The expansion of the node that created this one, with the [`Dataset::value_index`] of
    /// the feature and value leading here (`NONE` for the root): the rows are
    /// `rows(parent) ∩ (feature = value)`.
    pub origin: (u32, u32),
    /// Remaining depth, [`UNLIMITED`] without a depth limit (see [`Node::depth_left`]).
    depth: u16,
    pub expanded: bool,
    /// Whether its `ub` already includes the one-split look-ahead (`Graph::tighten_with`).
    pub tightened: bool,
    /// Score of making this node a leaf.
    pub leaf: S,
    /// The incumbent: once expanded, the index in `splits` of its split; before, the feature
    /// of the best one-split tree found by the look-ahead. `NONE` for the leaf. (One field for
    /// both keeps a node in 32 bytes: lymph holds 15 million of them.)
    incumbent: u32,
    /// Index in `splits` of the split with the largest upper bound, `NONE` if none.
    pub top: u32,
}

/// [`Node::depth`] without a depth limit.
const UNLIMITED: u16 = u16::MAX;
/// Deepest depth limit a node can hold (a deeper limit is either no limit at all, when it
/// reaches the number of features, or refused; see [`super::solve`]).
pub const MAX_DEPTH_LIMIT: u32 = UNLIMITED as u32 - 1;

impl<S> Node<S> {
    /// Remaining depth (`u32::MAX` when unlimited).
    pub fn depth_left(&self) -> u32 {
        match self.depth {
            UNLIMITED => u32::MAX,
            d => u32::from(d),
        }
    }

    /// Index in `splits` of the incumbent's split of an expanded node, `NONE` for a leaf.
    pub fn best(&self) -> u32 {
        if self.expanded {
            self.incumbent
        } else {
            NONE
        }
    }

    /// For a node not expanded: the feature of the best one-split tree found by the
    /// look-ahead, which is then the incumbent (`lb`); `NONE` when the incumbent is the leaf.
    pub fn stump(&self) -> u32 {
        if self.expanded || self.incumbent == DEPTH_TWO {
            NONE
        } else {
            self.incumbent
        }
    }
}

/// A node's bounds on its best subtree's score, kept apart from the node in a dense list:
/// refreshing a node reads the bounds of all its children, which an expansion creates together
/// (consecutive ids), so four children's bounds share a cache line where a node takes one alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds<S> {
    /// Upper bound on the best subtree's score.
    pub ub: S,
    /// Score of the best subtree found so far (the incumbent).
    pub lb: S,
}

impl<S: Score> Bounds<S> {
    /// Whether the node is solved: its incumbent reaches its upper bound.
    pub fn complete(&self) -> bool {
        self.ub <= self.lb
    }
}

/// What the one-level look-ahead learns about a subproblem.
pub struct LookAhead<S> {
    /// Upper bound on its best subtree.
    pub ub: S,
    /// Value of the best tree with at most one split (achievable).
    pub lb: S,
    /// That tree's split feature, `NONE` for the leaf.
    pub stump: u32,
}

/// Whether a feature may split a node's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Usable {
    Yes,
    /// Not here (a non-empty child below the minimum leaf size), but perhaps on a subset.
    NotHere,
    /// Not here and not on any subset of these rows: fewer than two non-empty children, or the
    /// rows outside the heaviest child are negligible. Both only get worse on a subset (the
    /// weight outside a subset's heaviest child is at most the weight outside the heaviest
    /// child's share of it), so a node's children inherit the features that are not `Never`.
    Never,
}

/// Buffers reused by every look-ahead (a search runs thousands, and allocating for each one
/// showed in profiles).
pub struct Scratch<S> {
    rows: Bitset,
    child_rows: Bitset,
    counter: SubsetCounter,
    slots: Vec<Summary<S>>,
    /// The child counts of the last row set looked ahead on (see [`Graph::count_children`]).
    table: Vec<u64>,
    /// The child counts of recently expanded nodes.
    tables: TableCache,
    /// The counts of the child a look-ahead derives by subtraction.
    heavy: Vec<u64>,
    /// The children of the split being tightened.
    kids: Vec<NodeId>,
    /// While a node is solved outright (see `depth_two`): a child's counts, the node's splits
    /// ranked by their bounds, and the features of the children's splits of the split tried
    /// and of the best split so far.
    child_table: Vec<u64>,
    child_ubs: Vec<S>,
    /// Whether the children bound one another during this solve (`depth_two`).
    similar: bool,
    ranked: Vec<(S, u32)>,
    /// The position in `ranked` of the first split not tried yet.
    later: usize,
    picks: Vec<u32>,
    best_picks: Vec<u32>,
    /// The counts of the children solved so far in this solve (`depth_two`).
    pairs: depth_two::Pairs,
    /// The pair counts of a solve that reads its splits off them (`pair_counts`).
    pair_counts: pair_counts::PairCounts,
    /// The children an expansion makes nodes of: split index, value, index in `flat` and key
    /// hash.
    wanted: Vec<(u32, u32, u32, u64)>,
    /// An expansion's candidate splits, their child summaries one after another in `flat`.
    candidates: Vec<Candidate<S>>,
    flat: Vec<Summary<S>>,
    /// The features an expansion tries, and those its children may try.
    pool: Vec<u32>,
    hereditary: Vec<u32>,
    /// The splits an expansion keeps (feature, range in `kept_slots`) and their children.
    kept: Vec<(u32, std::ops::Range<usize>)>,
    kept_slots: Vec<Slot>,
    /// The parents of an expansion's memo candidates (see [`Graph::prefetch_candidates`]).
    parents: Vec<u32>,
}

/// A split considered by an expansion, before the dominated ones are dropped.
struct Candidate<S> {
    feature: u32,
    slots: std::ops::Range<usize>,
    ub: S,
    lb: S,
}

impl<S> Scratch<S> {
    /// Heap bytes of the working buffers (their capacities; the table cache apart).
    fn bytes(&self) -> usize {
        fn of<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        self.rows.heap_bytes()
            + self.child_rows.heap_bytes()
            + self.counter.heap_bytes()
            + of(&self.slots)
            + of(&self.table)
            + of(&self.heavy)
            + of(&self.kids)
            + of(&self.child_table)
            + of(&self.child_ubs)
            + of(&self.ranked)
            + of(&self.picks)
            + of(&self.best_picks)
            + self.pairs.heap_bytes()
            + self.pair_counts.heap_bytes()
            + of(&self.wanted)
            + of(&self.candidates)
            + of(&self.flat)
            + of(&self.pool)
            + of(&self.hereditary)
            + of(&self.kept)
            + of(&self.kept_slots)
            + of(&self.parents)
    }
}

impl<S> Default for Scratch<S> {
    fn default() -> Self {
        Scratch {
            rows: Bitset::empty(0),
            child_rows: Bitset::empty(0),
            counter: SubsetCounter::empty(),
            slots: Vec::new(),
            table: Vec::new(),
            tables: TableCache::default(),
            heavy: Vec::new(),
            kids: Vec::new(),
            child_table: Vec::new(),
            child_ubs: Vec::new(),
            similar: false,
            ranked: Vec::new(),
            later: 0,
            picks: Vec::new(),
            best_picks: Vec::new(),
            pairs: depth_two::Pairs::default(),
            pair_counts: pair_counts::PairCounts::default(),
            wanted: Vec::new(),
            candidates: Vec::new(),
            flat: Vec::new(),
            pool: Vec::new(),
            hereditary: Vec::new(),
            kept: Vec::new(),
            kept_slots: Vec::new(),
            parents: Vec::new(),
        }
    }
}

/// Problem settings the graph needs.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_depth: Option<u32>,
    pub min_samples_leaf: u64,
}

/// The arena, the memo and the accounting.
pub struct Graph<'d, S: Score> {
    pub data: &'d Dataset,
    pub scale: Scale<S>,
    weights: Option<Vec<u64>>,
    limits: Limits,
    /// The nodes, in chunks: a list that grew by doubling would make the memory accounted for
    /// (and checked against the limit) jump by the whole arena at once.
    pub nodes: Arena<Node<S>>,
    /// The nodes' bounds, by node id (see [`Bounds`]).
    pub bounds: Arena<Bounds<S>>,
    /// What expanded nodes keep (see [`Expansion`]).
    expansions: Arena<Expansion>,
    /// Node ids by the hash of their key (8 bytes a node; matches are checked exactly).
    memo: TaggedIds,
    /// The root's candidate features: one per group of columns that partition the rows alike.
    root_features: Box<[u32]>,
    /// Most children a split of the searched features can have (at least 2).
    arity: usize,
    /// Where each feature's cells start in a table of child counts ([`Graph::count_table`]):
    /// `n_values · (n_classes + 1)` entries per feature, the last offset the table's size.
    offsets: Vec<usize>,
    /// Heap bytes held by row sets and split records (see [`Graph::memory`] for the total).
    pub bytes: usize,
    /// Memo hits: subproblems reached again through another path.
    pub memo_hits: u64,
    /// Splits dropped because they could not beat their node's incumbent.
    pub dominated_splits: u64,
    /// Counting done so far by look-aheads and expansions (features × row words × classes; a
    /// word per feature for a table derived by subtraction): on wide data one descent may
    /// tighten thousands of splits before it expands anything, so the search also paces its
    /// looks at the limits by this measure.
    pub counting_work: u64,
    scratch: Scratch<S>,
    /// Per-split (upper, lower) sums, reused by every refresh.
    sums: Vec<(S, S)>,
    /// What [`Graph::splits_of`] answers for a node that has no expansion.
    no_splits: Splits,
    /// Each feature's chain (the thresholds of one numeric column), or `NONE`; empty when the
    /// data have none (see [`Graph::bound_chain_siblings`]).
    chains: Vec<u32>,
    /// Upper bounds the chain bound lowers, gathered before they are applied.
    chain_updates: Vec<(NodeId, S)>,
    /// Upper bounds the chain bound lowered.
    pub chain_bounded: u64,
    /// Upper bounds the similarity bound (see [`Graph::bound_from_child`]) lowered.
    pub similar_bounded: u64,
    /// The trees of the nodes solved outright (see [`Graph::depth_two_tree`]): a feature and
    /// one per value of it.
    two_level: Arena<u32>,
    /// Nodes solved outright with two levels of depth left.
    pub depth_two_solved: u64,
}

fn key_hash(support: &Bitset, depth_left: u32) -> u64 {
    hash_words(support.words(), support.words(), depth_left)
}

/// [`key_hash`] of `rows ∩ other` without building the intersection.
fn key_hash_and(rows: &Bitset, other: &Bitset, depth_left: u32) -> u64 {
    hash_words(rows.words(), other.words(), depth_left)
}

/// Hash of the words `a[i] & b[i]` and the remaining depth. Four independent multiply chains:
/// one chain waits several cycles a word, and an expansion of mushroom hashes a hundred
/// 127-word keys (it was a seventh of the search's time). Each step folds the full 128-bit
/// product, so that a word's high bits reach every bit of the state (a 64-bit multiply only
/// carries bits upwards: row sets of one or two rows collided outright). A final avalanche
/// spreads every bit over the upper half, where the memo takes its tag and home slot from.
fn hash_words(a: &[u64], b: &[u64], depth_left: u32) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let step = |h: u64, w: u64| {
        let p = u128::from(h ^ w) * u128::from(K);
        (p as u64) ^ ((p >> 64) as u64)
    };
    let mut lanes = [0u64, 1, 2, 3];
    let (a4, b4) = (a.chunks_exact(4), b.chunks_exact(4));
    let (a_rest, b_rest) = (a4.remainder(), b4.remainder());
    for (x, y) in a4.zip(b4) {
        for l in 0..4 {
            lanes[l] = step(lanes[l], x[l] & y[l]);
        }
    }
    let mut h = u64::from(depth_left) | (a.len() as u64) << 32;
    for (x, y) in a_rest.iter().zip(b_rest) {
        h = step(h, x & y);
    }
    for lane in lanes {
        h = step(h, lane);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The features to search, in index order: the first of each group of columns that partition
/// the rows alike (equal up to renaming their values, such as a binary column and its
/// complement), leaving out columns with a single value. Two such columns split every subset
/// into the same children, so one of them reaches every tree value the other does.
fn distinct_partitions(data: &Dataset) -> Box<[u32]> {
    // Kept features by the hash of their partition (the value sets' hashes summed, so that the
    // values' names do not matter); partitions are compared in full only when hashes match.
    let mut seen: FastMap<u64, Vec<u32>> = FastMap::default();
    let mut out = Vec::new();
    for f in 0..data.n_features() {
        let parts = (0..data.n_values(f)).map(|v| data.rows_with(f, v));
        let parts: Vec<&Bitset> = parts.filter(|rows| !rows.is_empty()).collect();
        if parts.len() < 2 {
            continue;
        }
        let h = (parts.iter()).fold(0u64, |h, rows| h.wrapping_add(set_hash(rows)));
        let group = seen.entry(h).or_default();
        if !group
            .iter()
            .any(|&g| same_partition(data, &parts, g as usize))
        {
            group.push(f as u32);
            out.push(f as u32);
        }
    }
    out.into_boxed_slice()
}

/// A well-mixed hash of a row set's words.
fn set_hash(rows: &Bitset) -> u64 {
    let mut h = FastHasher::default();
    rows.words().iter().for_each(|&w| h.write_u64(w));
    let x = h.finish();
    (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (x >> 32)
}

/// Whether feature `g` splits the rows into exactly the sets `parts` (which cover the rows):
/// each part is the set of `g`'s value at the part's first row.
fn same_partition(data: &Dataset, parts: &[&Bitset], g: usize) -> bool {
    parts.iter().all(|rows| {
        let first = rows.iter().next().expect("parts are not empty");
        *rows == data.rows_with(g, data.code(first, g) as usize)
    })
}

/// A set of features, as a bit per feature of the data or as a list of indices, whichever is
/// smaller (lymph: one word where a list took 40 indices; a few features of many thousands stay
/// a short list).
#[derive(Debug)]
enum FeatureSet {
    Bits(Box<[u64]>),
    List(Box<[u32]>),
}

impl Default for FeatureSet {
    fn default() -> Self {
        FeatureSet::List(Box::default())
    }
}

impl FeatureSet {
    /// The set of `features` (increasing) among `n_features`.
    fn new(features: &[u32], n_features: usize) -> FeatureSet {
        let words = n_features.div_ceil(64);
        if 2 * words >= features.len() {
            return FeatureSet::List(Box::from(features));
        }
        let mut set = vec![0u64; words];
        for &f in features {
            set[f as usize / 64] |= 1 << (f % 64);
        }
        FeatureSet::Bits(set.into_boxed_slice())
    }

    fn is_empty(&self) -> bool {
        match self {
            FeatureSet::Bits(set) => set.iter().all(|&w| w == 0),
            FeatureSet::List(list) => list.is_empty(),
        }
    }

    /// Whether feature `f` is in the set.
    fn contains(&self, f: u32) -> bool {
        match self {
            FeatureSet::List(list) => list.binary_search(&f).is_ok(),
            FeatureSet::Bits(set) => set
                .get(f as usize / 64)
                .is_some_and(|w| w & (1 << (f % 64)) != 0),
        }
    }

    /// Appends the features to `out`, in increasing order.
    fn extend_into(&self, out: &mut Vec<u32>) {
        match self {
            FeatureSet::List(list) => out.extend_from_slice(list),
            FeatureSet::Bits(set) => {
                for (i, &word) in set.iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        out.push(64 * i as u32 + bits.trailing_zeros());
                        bits &= bits - 1;
                    }
                }
            }
        }
    }

    /// Heap bytes (with the allocator's block header).
    fn bytes(&self) -> usize {
        let n = match self {
            FeatureSet::Bits(set) => std::mem::size_of_val(&set[..]),
            FeatureSet::List(list) => std::mem::size_of_val(&list[..]),
        };
        if n == 0 {
            0
        } else {
            n + 16
        }
    }
}

impl<'d, S: Score> Graph<'d, S> {
    /// An empty graph for `data`; `weights` are integer row weights (None: all 1).
    pub fn new(
        data: &'d Dataset,
        scale: Scale<S>,
        weights: Option<Vec<u64>>,
        limits: Limits,
    ) -> Self {
        let root_features = distinct_partitions(data);
        let arity = (root_features.iter())
            .map(|&f| data.n_values(f as usize))
            .fold(2, usize::max);
        Graph {
            data,
            scale,
            weights,
            limits,
            nodes: Arena::new(),
            bounds: Arena::new(),
            expansions: Arena::new(),
            memo: TaggedIds::default(),
            root_features,
            arity,
            offsets: std::iter::once(0)
                .chain((0..data.n_features()).scan(0, |end, f| {
                    *end += data.n_values(f) * (data.n_classes() + 1);
                    Some(*end)
                }))
                .collect(),
            bytes: 0,
            memo_hits: 0,
            dominated_splits: 0,
            counting_work: 0,
            scratch: Scratch {
                rows: Bitset::empty(data.n_rows()),
                child_rows: Bitset::empty(data.n_rows()),
                ..Scratch::default()
            },
            sums: Vec::new(),
            no_splits: Splits::default(),
            chains: Vec::new(),
            chain_updates: Vec::new(),
            chain_bounded: 0,
            similar_bounded: 0,
            two_level: Arena::new(),
            depth_two_solved: 0,
        }
    }

    /// Declares chains of nested binary features: `chains[f]` names the chain of feature `f`
    /// (`NONE` for none), and the features of one chain must split every row set into nested
    /// sides, each value on the same side (the thresholds `x > t` of one numeric column). Any
    /// other length is ignored.
    pub fn set_chains(&mut self, chains: &[u32]) {
        let binary = |f: usize| self.data.n_values(f) == 2;
        if chains.len() == self.data.n_features()
            && (0..chains.len()).all(|f| chains[f] == NONE || binary(f))
        {
            self.chains = chains.to_vec();
        }
    }

    /// Whether one more expansion keeps every node id below [`Slot::MAX_ID`]: it adds at most a
    /// node per value of every feature. (2^31 nodes would take well over 100 GB: a memory limit
    /// stops any real search long before.)
    pub fn room_for_expansion(&self) -> bool {
        self.nodes.len() + self.most_new_nodes() < Slot::MAX_ID as usize
    }

    /// The most nodes one expansion adds: one per value of every feature.
    fn most_new_nodes(&self) -> usize {
        self.table_cells() / (self.data.n_classes() + 1)
    }

    /// Cells of a count table: (classes + 1) per value of every feature.
    fn table_cells(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// The most bytes the search may hold by the end of the next expansion, which the memory
    /// limit is checked against: [`Graph::held_bytes`] with everything an expansion may add
    /// (a node and its bounds per value of every feature, the expanded node's rows, split
    /// records and count table) and the peaks of the growths it may cause (the memo's table,
    /// the arenas' chunks, the table cache's lists). New chunks of nodes are megabytes: counted
    /// only once they were made, they took searches 5-15% past their limit.
    pub fn memory(&self) -> usize {
        let new_nodes = self.most_new_nodes();
        let n_features = self.data.n_features();
        let rows = self.data.n_rows().div_ceil(64) * 8 + 16;
        // Split records: a feature and a start per split, a slot per child; the feature set.
        let records = 4 * (2 * n_features + new_nodes) + 4 * n_features + 32;
        let table = self.table_cells();
        // Working buffers that may grow to an expansion's size: a count table and the heavy
        // child's copy of one, and per new child a summary, a wanted entry and a slot.
        let per_child = 2 * std::mem::size_of::<Summary<S>>() + 24 + 4;
        // (A node solved outright holds three tables: its own, a child's and the heaviest
        // child's, with a bound per child of its splits, a ranked split per feature and a
        // record of a feature per value.)
        // A solve from pairs holds its features' rows (at most `SIMILAR_FEATURES` of them) and
        // a count per pair of them.
        let pair_solve = depth_two::SIMILAR_FEATURES * (rows + 8 * depth_two::SIMILAR_FEATURES);
        let working = self.scratch.bytes() + 3 * table * 8 + new_nodes * per_child + pair_solve;
        self.bytes
            + rows
            + records
            + working
            + self.scratch.tables.peak_bytes_within_put(table)
            + self.nodes.peak_bytes_within(new_nodes)
            + self.bounds.peak_bytes_within(new_nodes)
            + self.expansions.peak_bytes_within(1)
            + self.memo.peak_bytes_within(new_nodes)
            + self.two_level.peak_bytes_within(1 + self.arity)
            + n_features * (std::mem::size_of::<(S, u32)>() + 8)
            + new_nodes * std::mem::size_of::<S>()
    }

    /// All the bytes the search holds now: row sets and split records, the arenas' chunks,
    /// the count tables, the working buffers and the memo. At most the [`Graph::memory`] of the check before the
    /// expansion that made it.
    pub fn held_bytes(&self) -> usize {
        self.bytes
            + self.scratch.bytes()
            + self.scratch.tables.bytes()
            + self.nodes.reserved_bytes()
            + self.bounds.reserved_bytes()
            + self.expansions.reserved_bytes()
            + self.two_level.reserved_bytes()
            + self.memo.bytes()
    }

    /// Hands the nodes and the memo to a thread that frees them: a search stopped by its time
    /// limit may hold millions of small blocks, and freeing them took seconds that the caller,
    /// promised an answer within about a second of the limit, would otherwise wait for.
    pub fn free_in_background(&mut self) {
        let nodes = std::mem::take(&mut self.nodes);
        let bounds = std::mem::take(&mut self.bounds);
        let memo = std::mem::take(&mut self.memo);
        let expansions = std::mem::take(&mut self.expansions);
        if nodes.len() < 100_000 {
            return; // quicker to free here than to start a thread
        }
        // If no thread can be started, the closure is dropped here and frees them in place.
        let _ = std::thread::Builder::new()
            .name("optitree-free".into())
            .spawn(move || drop((nodes, bounds, memo, expansions)));
    }

    /// Class totals (weighted) of a row set.
    pub fn class_totals(&self, rows: &Bitset) -> Vec<u64> {
        match &self.weights {
            None => self.data.class_counts(rows),
            Some(w) => {
                let mut out = vec![0u64; self.data.n_classes()];
                let labels = self.data.labels();
                for r in rows.iter() {
                    out[labels[r] as usize] += w[r];
                }
                out
            }
        }
    }

    /// Class totals and row count of `rows ∩ (feature f = v)` without building that set;
    /// `counter` must have been built for `rows` (it serves unweighted data).
    fn child_totals(
        &self,
        rows: &Bitset,
        counter: &SubsetCounter,
        f: usize,
        v: usize,
        out: &mut [u64],
    ) -> u64 {
        match &self.weights {
            None => counter.counts(self.data, f, v, out),
            Some(w) => {
                out.iter_mut().for_each(|x| *x = 0);
                let labels = self.data.labels();
                let mut n = 0;
                for r in rows.iter_and(self.data.rows_with(f, v)) {
                    out[labels[r] as usize] += w[r];
                    n += 1;
                }
                n
            }
        }
    }

    fn child_depth(depth_left: u32) -> u32 {
        if depth_left == u32::MAX {
            u32::MAX
        } else {
            depth_left - 1
        }
    }

    /// Whether a subproblem with this summary is closed at sight: empty, out of depth, or a leaf
    /// proven optimal by the purification bound (ties go to the leaf).
    fn closed(&self, summary: &Summary<S>, depth_left: u32) -> bool {
        summary.weight == 0 || depth_left == 0 || summary.split <= self.scale.leaf(summary.majority)
    }

    /// The summary of rows with these class weights.
    #[inline(always)] // in the loops over every child of every split of a look-ahead
    fn summary(&self, class_weights: &[u64]) -> Summary<S> {
        let weight = class_weights.iter().sum();
        let majority = class_weights.iter().copied().max().unwrap_or(0);
        // When the purification bound already closes the rows, or one split can reach every
        // class, the sharper bound is the purification bound (and costs a call and a sort).
        let pure = self.scale.pure_split(weight);
        let split = if pure <= self.scale.leaf(majority) || class_weights.len() <= self.arity {
            pure
        } else {
            self.scale.split_bound(class_weights, self.arity)
        };
        Summary {
            weight,
            majority,
            split,
        }
    }

    /// Upper and lower bounds of a child slot (a closed child is worth its leaf exactly).
    pub fn slot_bounds(&self, slot: Slot) -> (S, S) {
        match slot.id() {
            Some(id) => {
                let b = &self.bounds[id as usize];
                (b.ub, b.lb)
            }
            None => {
                let leaf = self.scale.leaf(slot.majority().unwrap_or(0));
                (leaf, leaf)
            }
        }
    }

    /// Bounds of a subproblem known only by its counts: the leaf below, the purification bound
    /// above (the leaf itself when it is closed).
    fn summary_bounds(&self, summary: &Summary<S>, depth_left: u32) -> (S, S) {
        let leaf = self.scale.leaf(summary.majority);
        if self.closed(summary, depth_left) {
            (leaf, leaf)
        } else {
            (summary.split, leaf)
        }
    }

    /// Whether a child slot is known to be solved exactly.
    pub fn slot_complete(&self, slot: Slot) -> bool {
        slot.id()
            .is_none_or(|id| self.bounds[id as usize].complete())
    }

    /// Adds the root (all rows); None when the root is closed at sight (the leaf is optimal).
    pub fn add_root(&mut self) -> Option<NodeId> {
        let rows = self.data.all_rows();
        let totals = self.class_totals(&rows);
        let depth = self.limits.max_depth.unwrap_or(u32::MAX);
        let summary = self.summary(&totals);
        if self.closed(&summary, depth) {
            return None;
        }
        let id = self.node_for(&rows, summary, depth, (NONE, 0));
        self.keep_rows(id, rows);
        Some(id)
    }

    /// Whether a split of rows weighing `weight` whose heaviest child weighs `largest` is
    /// dominated by not splitting: the other children are [`Scale::negligible`], so routing
    /// every row through the heaviest child's subtree loses no objective and saves a split.
    /// Only without a minimum leaf size: that rerouting can fill an empty leaf with too few rows.
    fn dominated(&self, weight: u64, largest: u64) -> bool {
        self.limits.min_samples_leaf <= 1 && self.scale.negligible(weight - largest)
    }

    /// Sharpens a node's upper bound with the one-split look-ahead (once per node; expanded
    /// nodes have exact split sums already), trying the features `pool_owner` keeps for its
    /// children (see [`Graph::pool_of`]), which must include every feature usable on the
    /// node's rows. Returns whether anything was computed.
    fn tighten_with(&mut self, id: NodeId, pool_owner: NodeId) -> bool {
        let node = &self.nodes[id as usize];
        if node.tightened || node.expanded || self.bounds[id as usize].complete() {
            return false;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut rows = std::mem::replace(&mut scratch.rows, Bitset::empty(0));
        self.rows_into(id, &mut rows);
        let totals = self.class_totals(&rows);
        let mut features = std::mem::take(&mut scratch.pool);
        features.clear();
        self.pool_into(pool_owner, &mut features);
        scratch.counter.reset(self.data, &rows);
        let mut table = std::mem::take(&mut scratch.table);
        self.count_table(&rows, &scratch.counter, &totals, &features, &mut table);
        let look = self.look_ahead(&table, &totals, id, &features);
        scratch.pool = features;
        scratch.table = table;
        scratch.rows = rows;
        self.scratch = scratch;
        self.apply(id, look);
        true
    }

    /// Tightens the children of split `split` of the expanded node `parent`. When the parent's
    /// child counts are cached (see [`TableCache`]) and its heaviest open child weighs more
    /// than all the other children together, that child's counts are the parent's minus its
    /// siblings': counting the light siblings costs less than counting the heavy child.
    pub fn tighten_split(&mut self, parent: NodeId, split: usize) -> bool {
        let open = |g: &Self, c: NodeId| {
            (g.nodes.get(c as usize))
                .is_some_and(|n| !(n.tightened || n.expanded || g.bounds[c as usize].complete()))
        };
        let mut kids = std::mem::take(&mut self.scratch.kids);
        let splits = self.splits_of(parent);
        let feature = splits.feature(split);
        kids.clear();
        kids.extend(
            splits
                .children(split)
                .iter()
                .map(|s| s.id().unwrap_or(NONE)),
        );
        if !kids.iter().any(|&c| open(self, c)) {
            self.scratch.kids = kids;
            return false;
        }
        // The children's weights are in the parent's cached counts, if still there.
        let k = self.data.n_classes();
        let cells = self.offsets[feature as usize]..self.offsets[feature as usize + 1];
        let heaviest = match self.scratch.tables.peek(parent).map(|t| &t[cells]) {
            Some(cells) if self.has_pool(parent) => {
                let weight = |v: usize| cells[v * (k + 1)..][..k].iter().sum::<u64>();
                let total: u64 = (0..kids.len()).map(weight).sum();
                (kids.iter().enumerate())
                    .filter(|&(_, &c)| open(self, c))
                    .max_by_key(|&(v, _)| weight(v))
                    .filter(|&(v, _)| 2 * weight(v) > total)
                    .map(|(v, _)| v)
            }
            _ => None,
        };
        let Some(heavy) = heaviest else {
            for &c in &kids {
                if open(self, c) {
                    self.tighten_with(c, parent);
                }
            }
            self.scratch.kids = kids;
            self.bound_chain_siblings(parent, split);
            return true;
        };
        // The heavy child's counts: the parent's, less each sibling's (counted, and looked
        // ahead on when the sibling needs it).
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut heavy_table = std::mem::take(&mut scratch.heavy);
        heavy_table.clear();
        heavy_table.extend_from_slice(scratch.tables.get(parent).unwrap_or_default());
        let mut rows = std::mem::replace(&mut scratch.rows, Bitset::empty(0));
        let mut table = std::mem::take(&mut scratch.table);
        let mut features = std::mem::take(&mut scratch.pool);
        features.clear();
        self.pool_into(parent, &mut features);
        for (v, &c) in kids.iter().enumerate().filter(|&(v, _)| v != heavy) {
            if let Some(p) = self.support_of(parent) {
                p.and_into(self.data.rows_with(feature as usize, v), &mut rows);
            }
            let totals = self.class_totals(&rows);
            scratch.counter.reset(self.data, &rows);
            self.count_table(&rows, &scratch.counter, &totals, &features, &mut table);
            for &f in &features {
                let cells = self.offsets[f as usize]..self.offsets[f as usize + 1];
                (heavy_table[cells.clone()].iter_mut())
                    .zip(&table[cells])
                    .for_each(|(h, x)| *h -= x);
            }
            if open(self, c) {
                let look = self.look_ahead(&table, &totals, c, &features);
                self.apply(c, look);
            }
        }
        let mut totals = vec![0; k];
        if let Some(&f) = features.first() {
            // The children of any feature's split add up to the rows' totals.
            let cells = &heavy_table[self.offsets[f as usize]..self.offsets[f as usize + 1]];
            for cell in cells.chunks_exact(k + 1) {
                totals.iter_mut().zip(cell).for_each(|(t, c)| *t += c);
            }
        }
        let c = kids[heavy];
        let look = self.look_ahead(&heavy_table, &totals, c, &features);
        self.counting_work += (features.len() * self.data.n_classes()) as u64;
        self.apply(c, look);
        (scratch.rows, scratch.table, scratch.heavy) = (rows, table, heavy_table);
        (scratch.pool, scratch.kids) = (features, kids);
        self.scratch = scratch;
        self.bound_chain_siblings(parent, split);
        true
    }

    /// The similarity bound from an expanded child to its siblings. A subtree over rows `X` is
    /// worth at most the best over `X ∩ Y` plus the weight of `X \ Y` (see
    /// [`Graph::bound_chain_siblings`]), and the best over `X ∩ Y` is at most the best over
    /// `Y` (the same tree does at least as well on all of `Y`). So when `child` (rows `Y`, a
    /// child of `parent`) has a new upper bound, every child `X` of `parent`'s other splits
    /// (same depth left) is worth at most that bound plus `X`'s weight outside `Y`: `X`'s
    /// weight in the parent's counts less its feature value's weight in `child`'s counts (both
    /// cached at their expansions). Where depth is limited, an expanded child's bound falls far
    /// below its weight, and a sibling sharing most of its rows inherits that: kr-vs-kp at
    /// depth 4 expands 40% fewer nodes. It pays for its updates only on many features, fewer
    /// with a depth limit than without, where bounds fall slowly (see [`SIMILAR_FEATURES`]
    /// and [`SIMILAR_FEATURES_LIMITED`]). Needs no minimum leaf size (`X ∩ Y` alone could
    /// leave a leaf too small).
    pub fn bound_from_child(&mut self, parent: NodeId, child: NodeId) {
        let fewest = match self.limits.max_depth {
            None => SIMILAR_FEATURES,
            Some(_) => SIMILAR_FEATURES_LIMITED,
        };
        if self.limits.min_samples_leaf > 1 || self.data.n_features() < fewest {
            return;
        }
        let mut updates = std::mem::take(&mut self.chain_updates);
        updates.clear();
        self.child_bounds_into(parent, child, &mut updates);
        self.similar_bounded += self.lower_upper_bounds(&updates);
        self.chain_updates = updates;
    }

    /// The bounds [`Graph::bound_from_child`] gives `parent`'s other children, as (node, upper
    /// bound), where they are below the children's own.
    fn child_bounds_into(&self, parent: NodeId, child: NodeId, updates: &mut Vec<(NodeId, S)>) {
        let tables = &self.scratch.tables;
        let (Some(parent_table), Some(child_table)) = (tables.peek(parent), tables.peek(child))
        else {
            return;
        };
        // The child's table counts the features its creator's children may try (see `expand`).
        let creator = self.nodes[child as usize].origin.0;
        let Some(counted) = self.expansions.get(creator as usize).map(|e| &e.features) else {
            return;
        };
        let base = self.bounds[child as usize].ub;
        let k = self.data.n_classes();
        for (g, children) in self.splits_of(parent).iter() {
            if !counted.contains(g) {
                continue;
            }
            let offset = self.offsets[g as usize];
            for (w, &slot) in children.iter().enumerate() {
                let Some(id) = slot.id().filter(|&id| id != child) else {
                    continue;
                };
                let bounds = &self.bounds[id as usize];
                if bounds.complete() || bounds.ub <= base {
                    continue;
                }
                let at = offset + w * (k + 1);
                let ub = self.bound_through(base, parent_table, child_table, at);
                if ub < bounds.ub {
                    updates.push((id, ub));
                }
            }
        }
    }

    /// The similarity bound along a chain of thresholds: once split `split` of `parent` has
    /// its children tightened, every other split of the same chain has children nested with
    /// them, and a subtree over rows `A ∪ D` is worth at most the best over `A` plus `D`'s
    /// weight (the best tree over `A ∪ D`, used on `A` alone, loses at most `D`'s rows, and
    /// its splits left empty or negligible there can go). So child `v` of split `j` is worth
    /// at most child `v` of `split` plus the weight it holds beyond it: one tightening bounds
    /// the neighbouring thresholds too, where a wide numeric column's splits all tie under the
    /// purification bound (breast cancer's root: 11,699 of them). Needs the parent's child
    /// counts (cached at its expansion) and no minimum leaf size (`A` alone could leave a
    /// leaf too small).
    fn bound_chain_siblings(&mut self, parent: NodeId, split: usize) {
        if self.chains.is_empty() || self.limits.min_samples_leaf > 1 {
            return;
        }
        let mut updates = std::mem::take(&mut self.chain_updates);
        updates.clear();
        self.chain_bounds_into(parent, split, &mut updates);
        self.chain_bounded += self.lower_upper_bounds(&updates);
        self.chain_updates = updates;
    }

    /// The similarity bound on the subset `X` of a node's rows whose counts sit at cell `at`
    /// of the node's `table`, from a subset `Y` worth at most `base` with counts
    /// `subset_table`: `base` plus the weight of `X` outside `Y`.
    fn bound_through(&self, base: S, table: &[u64], subset_table: &[u64], at: usize) -> S {
        let k = self.data.n_classes();
        let weight = |t: &[u64]| -> u64 { t[at..][..k].iter().sum() };
        base + self.scale.leaf(weight(table) - weight(subset_table))
    }

    /// Lowers each node's upper bound to the one `updates` gives it, where lower; returns how
    /// many were lowered. The bounds come from the similarity bounds, which never fall below
    /// a node's optimum, so neither below its incumbent.
    fn lower_upper_bounds(&mut self, updates: &[(NodeId, S)]) -> u64 {
        let mut lowered = 0;
        for &(id, ub) in updates {
            let bounds = &mut self.bounds[id as usize];
            debug_assert!(
                ub >= bounds.lb,
                "a similarity bound below a node's incumbent"
            );
            lowered += u64::from(ub < bounds.ub);
            bounds.ub = bounds.ub.min(ub);
        }
        lowered
    }

    /// The bounds [`Graph::bound_chain_siblings`] gives the open children of `split`'s chain
    /// siblings, as (node, upper bound).
    fn chain_bounds_into(&self, parent: NodeId, split: usize, updates: &mut Vec<(NodeId, S)>) {
        let splits = self.splits_of(parent);
        let feature = splits.feature(split) as usize;
        let chain = self.chains[feature];
        let Some(table) = self.scratch.tables.peek(parent) else {
            return;
        };
        if chain == NONE || splits.children(split).len() != 2 {
            return;
        }
        let k = self.data.n_classes();
        let weight = |f: usize, v: usize| -> u64 {
            table[self.offsets[f] + v * (k + 1)..][..k].iter().sum()
        };
        let tightened = splits.children(split);
        let base: [(S, u64); 2] =
            [0, 1].map(|v| (self.slot_bounds(tightened[v]).0, weight(feature, v)));
        for (j, (g, children)) in splits.iter().enumerate() {
            if j == split || self.chains[g as usize] != chain || children.len() != 2 {
                continue;
            }
            for (v, &slot) in children.iter().enumerate() {
                let Some(id) = slot.id() else { continue };
                if self.bounds[id as usize].complete() {
                    continue;
                }
                let (ub, w) = base[v];
                let beyond = weight(g as usize, v).saturating_sub(w);
                updates.push((id, ub + self.scale.leaf(beyond)));
            }
        }
    }

    /// Records what a look-ahead learnt about a node.
    fn apply(&mut self, id: NodeId, look: LookAhead<S>) {
        let node = &mut self.nodes[id as usize];
        let bounds = &mut self.bounds[id as usize];
        bounds.ub = bounds.ub.min(look.ub);
        if look.lb > bounds.lb {
            bounds.lb = look.lb;
            node.incumbent = look.stump;
        }
        node.tightened = true;
    }

    /// Fills `out` with the children's class totals and row counts of splitting `rows`
    /// (counted by `counter`, with class `totals`) on feature `f`: one cell of
    /// `n_classes + 1` entries per value, the last child by subtraction.
    fn count_children(
        &self,
        rows: &Bitset,
        counter: &SubsetCounter,
        (totals, count): (&[u64], u64),
        f: usize,
        out: &mut [u64],
    ) {
        let k = self.data.n_classes();
        let n_values = self.data.n_values(f);
        let (body, last) = out.split_at_mut((n_values - 1) * (k + 1));
        last[..k].copy_from_slice(totals);
        last[k] = count;
        for (v, cell) in body.chunks_exact_mut(k + 1).enumerate() {
            cell[k] = self.child_totals(rows, counter, f, v, &mut cell[..k]);
            last.iter_mut().zip(cell.iter()).for_each(|(r, x)| *r -= x);
        }
    }

    /// Fills the rows' child counts (see [`Graph::count_children`]) for every feature of
    /// `features` into `table`, laid out by [`Graph::offsets`], and tallies the work.
    fn count_table(
        &mut self,
        rows: &Bitset,
        counter: &SubsetCounter,
        totals: &[u64],
        features: &[u32],
        table: &mut Vec<u64>,
    ) {
        self.counting_work += (features.len() * rows.words().len() * totals.len()) as u64;
        table.resize(self.offsets[self.data.n_features()], 0);
        let count = rows.count();
        if self.weights.is_none() {
            match totals.len() {
                2 => return self.count_table_of::<2>(counter, (totals, count), features, table),
                3 => return self.count_table_of::<3>(counter, (totals, count), features, table),
                _ => {}
            }
        }
        for &f in features {
            let f = f as usize;
            let cells = &mut table[self.offsets[f]..self.offsets[f + 1]];
            self.count_children(rows, counter, (totals, count), f, cells);
        }
    }

    /// [`Graph::count_table`] for unweighted rows of exactly `K` classes: the same cells, with
    /// the counting inlined (see [`SubsetCounter::counts_fixed`]).
    fn count_table_of<const K: usize>(
        &self,
        counter: &SubsetCounter,
        (totals, count): (&[u64], u64),
        features: &[u32],
        table: &mut [u64],
    ) {
        for &f in features {
            let f = f as usize;
            let cells = &mut table[self.offsets[f]..self.offsets[f + 1]];
            let (body, last) = cells.split_at_mut(cells.len() - (K + 1));
            let mut rest = [0u64; K];
            rest.copy_from_slice(totals);
            let mut rest_count = count;
            for (v, cell) in body.chunks_exact_mut(K + 1).enumerate() {
                let counts = counter.counts_fixed::<K>(self.data, f, v);
                let n: u64 = counts.iter().sum();
                cell[..K].copy_from_slice(&counts);
                cell[K] = n;
                rest.iter_mut().zip(&counts).for_each(|(r, c)| *r -= c);
                rest_count -= n;
            }
            last[..K].copy_from_slice(&rest);
            last[K] = rest_count;
        }
    }

    /// Fills `slots` with the child summaries of feature `f`'s split from its `cells` (see
    /// [`Graph::count_children`]) and returns whether the split is worth considering: at least
    /// two non-empty children, none below the minimum leaf size, and not [`Graph::dominated`]
    /// (see [`Usable`]).
    fn split_summaries(&self, cells: &[u64], slots: &mut Vec<Summary<S>>) -> Usable {
        slots.clear();
        let k = self.data.n_classes();
        let (mut non_empty, mut too_small) = (0, false);
        for cell in cells.chunks_exact(k + 1) {
            let c = cell[k];
            non_empty += usize::from(c > 0);
            too_small |= c > 0 && c < self.limits.min_samples_leaf;
            slots.push(self.summary(&cell[..k]));
        }
        let weight: u64 = slots.iter().map(|s| s.weight).sum();
        let largest = slots.iter().map(|s| s.weight).max().unwrap_or(0);
        self.usable(non_empty, too_small, weight, largest)
    }

    /// The [`Usable`] verdict on a split from its count of non-empty children, whether one is
    /// below the minimum leaf size, and its children's total and largest weight.
    fn usable(&self, non_empty: usize, too_small: bool, weight: u64, largest: u64) -> Usable {
        if non_empty < 2 || self.dominated(weight, largest) {
            Usable::Never
        } else if too_small {
            Usable::NotHere
        } else {
            Usable::Yes
        }
    }

    /// Upper bound for node `id` from its child counts `table` over `features`, one level
    /// sharper than purification: a tree on these rows is a leaf, or splits on some feature f
    /// into children whose subtrees are each worth at most their own purification bound
    /// (exactly their leaf when they are closed). So the bound is
    /// `max(leaf, max_f Σ_v ub0(child_v) − λ)`; with one level of depth left it is exact.
    fn look_ahead(
        &self,
        table: &[u64],
        totals: &[u64],
        id: NodeId,
        features: &[u32],
    ) -> LookAhead<S> {
        let leaf = self.scale.leaf(totals.iter().copied().max().unwrap_or(0));
        let child_depth = Self::child_depth(self.nodes[id as usize].depth_left());
        let mut best = leaf;
        let (mut stump_value, mut stump) = (leaf, NONE);
        let cost = self.scale.split_cost;
        for &f in features {
            let cells = &table[self.offsets[f as usize]..self.offsets[f as usize + 1]];
            let Some((bound, as_leaves)) = self.split_sums(cells, child_depth) else {
                continue;
            };
            best = best.max(bound - cost);
            if as_leaves - cost > stump_value {
                (stump_value, stump) = (as_leaves - cost, f);
            }
        }
        LookAhead {
            ub: best,
            lb: stump_value,
            stump,
        }
    }

    /// The sums over a split's children, from its `cells` (see [`Graph::count_children`]),
    /// with `child_depth` levels left below it: of their upper bounds, and of their leaves.
    /// None when the split is not [`Usable::Yes`]. What `split_summaries` decides, in one pass
    /// over the children without storing them (this runs for every feature of every
    /// look-ahead).
    #[inline(always)] // in look-ahead's loop over every feature: a call per feature showed
    fn split_sums(&self, cells: &[u64], child_depth: u32) -> Option<(S, S)> {
        // The loop over the children unrolled for two or three classes (the branch is the
        // same for every feature, so it costs next to nothing).
        match self.data.n_classes() {
            2 => self.split_sums_of::<2>(cells, child_depth),
            3 => self.split_sums_of::<3>(cells, child_depth),
            _ => self.split_sums_of::<0>(cells, child_depth),
        }
    }

    /// [`Graph::split_sums`] for `K` classes (any number when `K` is 0).
    #[inline(always)]
    fn split_sums_of<const K: usize>(&self, cells: &[u64], child_depth: u32) -> Option<(S, S)> {
        let k = if K == 0 { self.data.n_classes() } else { K };
        let (mut bound, mut as_leaves) = (S::default(), S::default());
        let (mut non_empty, mut too_small) = (0, false);
        let (mut weight, mut largest) = (0, 0);
        for cell in cells.chunks_exact(k + 1) {
            let rows = cell[k];
            non_empty += usize::from(rows > 0);
            too_small |= rows > 0 && rows < self.limits.min_samples_leaf;
            let child = self.summary(&cell[..k]);
            (weight, largest) = (weight + child.weight, largest.max(child.weight));
            let (child_ub, child_leaf) = self.summary_bounds(&child, child_depth);
            (bound, as_leaves) = (bound + child_ub, as_leaves + child_leaf);
        }
        (self.usable(non_empty, too_small, weight, largest) == Usable::Yes)
            .then_some((bound, as_leaves))
    }

    /// The splits of node `id` (none before it is expanded).
    pub fn splits_of(&self, id: NodeId) -> &Splits {
        match self
            .expansions
            .get(self.nodes[id as usize].expansion as usize)
        {
            Some(e) => &e.splits,
            None => &self.no_splits,
        }
    }

    /// Appends to `out` the features that node `id`'s children may try: those it found usable
    /// on some subset of its rows once expanded (none before).
    fn pool_into(&self, id: NodeId, out: &mut Vec<u32>) {
        let e = self.nodes[id as usize].expansion;
        if let Some(e) = self.expansions.get(e as usize) {
            e.features.extend_into(out);
        }
    }

    /// Whether node `id` has found features for its children (see [`Graph::pool_into`]).
    fn has_pool(&self, id: NodeId) -> bool {
        let e = self.nodes[id as usize].expansion;
        (self.expansions.get(e as usize)).is_some_and(|e| !e.features.is_empty())
    }

    /// Appends to `out` the features the children of expansion `e` may try (see
    /// [`Graph::pool_into`]); every searched feature for the root's origin (`NONE`).
    fn pool_of_expansion_into(&self, e: u32, out: &mut Vec<u32>) {
        match self.expansions.get(e as usize) {
            Some(e) => e.features.extend_into(out),
            None => out.extend_from_slice(&self.root_features),
        }
    }

    /// The rows of node `id`, if it keeps them (see [`Expansion`]).
    fn support_of(&self, id: NodeId) -> Option<&Bitset> {
        self.rows_of_expansion(self.nodes[id as usize].expansion)
    }

    /// The rows kept by expansion `e` (None for `NONE`).
    fn rows_of_expansion(&self, e: u32) -> Option<&Bitset> {
        self.expansions.get(e as usize).map(|e| &e.support)
    }

    /// Writes the rows of a node that is not expanded (built from its origin) into `out`.
    fn rows_into(&self, id: NodeId, out: &mut Bitset) {
        let (parent, value) = self.nodes[id as usize].origin;
        match (self.support_of(id), self.rows_of_expansion(parent)) {
            (Some(rows), _) => out.clone_from(rows),
            (None, Some(parent_rows)) => {
                parent_rows.and_into(self.data.rows_of_value(value as usize), out)
            }
            // Unreachable by construction: a node's origin is expanded and keeps its rows.
            (None, None) => *out = Bitset::empty(out.len()),
        }
    }

    /// Whether node `id` holds exactly `rows` (read from its origin without building a set).
    fn holds(&self, id: NodeId, rows: &Bitset) -> bool {
        if let Some(own) = self.support_of(id) {
            return own == rows;
        }
        let (parent, value) = self.nodes[id as usize].origin;
        match self.rows_of_expansion(parent) {
            Some(parent_rows) => {
                parent_rows.and_equals(self.data.rows_of_value(value as usize), rows)
            }
            None => false, // unreachable by construction: a node's origin keeps its rows
        }
    }

    /// The existing node of the subproblem (`rows`, `depth_left`), if any; hash matches are
    /// checked against the candidate's actual rows.
    fn lookup(&self, rows: &Bitset, depth_left: u32, hash: u64) -> Option<NodeId> {
        self.memo
            .candidates(hash)
            .find(|&id| self.nodes[id as usize].depth_left() == depth_left && self.holds(id, rows))
    }

    /// The origin of a child of expansion `e`: its feature's value, as one value index.
    fn origin(&self, e: u32, feature: u32, v: u32) -> (u32, u32) {
        (
            e,
            self.data.value_index(feature as usize, v as usize) as u32,
        )
    }

    /// The node of the subproblem with these rows, created (without storing the rows) if new.
    fn node_for(
        &mut self,
        rows: &Bitset,
        summary: Summary<S>,
        depth_left: u32,
        origin: (u32, u32),
    ) -> NodeId {
        let hash = key_hash(rows, depth_left);
        self.node_for_hashed(rows, summary, depth_left, origin, hash)
    }

    /// [`Graph::node_for`] with the key's hash already computed.
    fn node_for_hashed(
        &mut self,
        rows: &Bitset,
        summary: Summary<S>,
        depth_left: u32,
        origin: (u32, u32),
        hash: u64,
    ) -> NodeId {
        if let Some(id) = self.lookup(rows, depth_left, hash) {
            self.memo_hits += 1;
            return id;
        }
        let id = self.nodes.len() as NodeId;
        self.memo.insert(hash, id);
        let leaf = self.scale.leaf(summary.majority);
        self.push_node(origin, depth_left, leaf, summary.split.max(leaf));
        id
    }

    /// Appends a node not expanded yet, worth at least its leaf and at most `ub` (complete when
    /// they meet).
    fn push_node(&mut self, origin: (u32, u32), depth_left: u32, leaf: S, ub: S) -> NodeId {
        let id = self.nodes.len() as NodeId;
        // Limits past MAX_DEPTH_LIMIT are turned away by `solve`.
        let depth = u16::try_from(depth_left).unwrap_or(UNLIMITED);
        self.nodes.push(Node {
            expansion: NONE,
            origin,
            depth,
            expanded: false,
            tightened: false,
            leaf,
            incumbent: NONE,
            top: NONE,
        });
        self.bounds.push(Bounds { ub, lb: leaf });
        id
    }

    /// A node for a closed child too heavy for a [`Slot`] of its own (only with sample weights
    /// adding up to 2^31 or more): complete at birth, worth its leaf.
    fn closed_node(&mut self, summary: &Summary<S>, depth_left: u32, origin: (u32, u32)) -> Slot {
        let leaf = self.scale.leaf(summary.majority);
        Slot::node(self.push_node(origin, depth_left, leaf, leaf))
    }

    /// Creates the split records of an open node: one per feature that sends its rows to at
    /// least two children (each non-empty child holding at least `min_samples_leaf` rows), except
    /// those that already cannot beat the best one-level tree.
    ///
    /// Working buffers come from the scratch and what the node keeps is allocated once at its
    /// exact size: temporaries interleaved with long-lived blocks would leave holes in the heap
    /// that the memory accounting cannot see (a third of the process's memory on lymph-f).
    pub fn expand(&mut self, id: NodeId) {
        if self.nodes[id as usize].depth_left() == 2 && self.solve_depth_two(id) {
            return;
        }
        if self.nodes[id as usize].expansion == NONE {
            let mut own = Bitset::empty(self.data.n_rows());
            self.rows_into(id, &mut own);
            self.keep_rows(id, own);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        // A copy, because children created below may be checked against this node's rows.
        let mut rows = std::mem::replace(&mut scratch.rows, Bitset::empty(0));
        self.rows_into(id, &mut rows);
        let depth = self.nodes[id as usize].depth_left();
        let parent_totals = self.class_totals(&rows);
        let cost = self.scale.split_cost;
        scratch.counter.reset(self.data, &rows);
        scratch.candidates.clear();
        scratch.flat.clear();
        scratch.pool.clear();
        self.pool_of_expansion_into(self.nodes[id as usize].origin.0, &mut scratch.pool);
        scratch.hereditary.clear();
        // The node's child counts stay cached for a while: its children's look-aheads will
        // want them (see `tighten_split`).
        let mut table = std::mem::take(&mut scratch.table);
        self.count_table(
            &rows,
            &scratch.counter,
            &parent_totals,
            &scratch.pool,
            &mut table,
        );
        for &f32 in &scratch.pool {
            let f = f32 as usize;
            let cells = &table[self.offsets[f]..self.offsets[f + 1]];
            let usable = self.split_summaries(cells, &mut scratch.slots);
            if usable != Usable::Never {
                scratch.hereditary.push(f32);
            }
            if usable != Usable::Yes {
                // All rows in one child, a leaf too small, or the other children too light to
                // pay for the split: dominated by not splitting.
                continue;
            }
            let (mut ub, mut lb) = (-cost, -cost);
            for summary in scratch.slots.iter() {
                let (u, l) = self.summary_bounds(summary, Self::child_depth(depth));
                ub += u;
                lb += l;
            }
            let start = scratch.flat.len();
            scratch.flat.extend_from_slice(&scratch.slots);
            scratch.candidates.push(Candidate {
                feature: f as u32,
                slots: start..scratch.flat.len(),
                ub,
                lb,
            });
        }
        // Keep only splits that may still beat the best one-level tree (and that tree's split).
        let (mut incumbent, mut incumbent_split) = (self.nodes[id as usize].leaf, NONE as usize);
        for (i, c) in scratch.candidates.iter().enumerate() {
            if c.lb > incumbent {
                (incumbent, incumbent_split) = (c.lb, i);
            }
        }
        let kept = |i: usize, c: &Candidate<S>| c.ub > incumbent || i == incumbent_split;
        let n_kept = (scratch.candidates.iter().enumerate())
            .filter(|&(i, c)| kept(i, c))
            .count();
        self.dominated_splits += (scratch.candidates.len() - n_kept) as u64;
        // Children that may still split become nodes (shared with every other parent that
        // reaches the same rows); the others stay summaries. The memo lookups go in waves so
        // that their cache misses overlap: hash every child and prefetch its memo slot, then
        // what checking the candidate each slot names reads (`prefetch_candidates`), then look
        // up for real.
        let child_depth = Self::child_depth(depth);
        let expansion = self.nodes[id as usize].expansion;
        scratch.wanted.clear();
        scratch.kept.clear();
        scratch.kept_slots.clear();
        for (i, c) in scratch.candidates.iter().enumerate() {
            if !kept(i, c) {
                continue;
            }
            let summaries = &scratch.flat[c.slots.clone()];
            let start = scratch.kept_slots.len();
            for (v, summary) in summaries.iter().enumerate() {
                // Children that stay summaries are closed: their majority is all they need
                // (node ids replace the others below; a closed child whose majority does not
                // fit a slot gets a node of its own).
                let closed = self.closed(summary, child_depth);
                let slot = match closed {
                    true => Slot::closed(summary.majority).unwrap_or_else(|| {
                        let origin = self.origin(expansion, c.feature, v as u32);
                        self.closed_node(summary, child_depth, origin)
                    }),
                    false => Slot::node(0), // replaced by the child's node below
                };
                scratch.kept_slots.push(slot);
                if !closed {
                    let f_rows = self.data.rows_with(c.feature as usize, v);
                    let hash = key_hash_and(&rows, f_rows, child_depth);
                    self.memo.prefetch(hash);
                    let at = (c.slots.start + v) as u32;
                    scratch
                        .wanted
                        .push((scratch.kept.len() as u32, v as u32, at, hash));
                }
            }
            scratch
                .kept
                .push((c.feature, start..scratch.kept_slots.len()));
        }
        debug_assert_eq!(scratch.kept.len(), n_kept);
        self.prefetch_candidates(&scratch.wanted, &mut scratch.parents);
        for &(s, v, at, hash) in &scratch.wanted {
            let (feature, ref children) = scratch.kept[s as usize];
            rows.and_into(
                self.data.rows_with(feature as usize, v as usize),
                &mut scratch.child_rows,
            );
            let origin = self.origin(expansion, feature, v);
            let summary = scratch.flat[at as usize];
            let id = self.node_for_hashed(&scratch.child_rows, summary, child_depth, origin, hash);
            scratch.kept_slots[children.start + v as usize] = Slot::node(id);
        }
        let kept_slots = &scratch.kept_slots;
        let splits = Splits::new(
            scratch
                .kept
                .iter()
                .map(|(f, r)| (*f, &kept_slots[r.clone()])),
        );
        let features = FeatureSet::new(&scratch.hereditary, self.data.n_features());
        scratch.table = scratch.tables.put(id, table);
        scratch.rows = rows;
        self.scratch = scratch;
        self.bytes += splits.bytes() + features.bytes();
        let node = &mut self.nodes[id as usize];
        node.expanded = true;
        node.incumbent = NONE; // a split index from now on, set by the refresh that follows
        if let Some(e) = self.expansions.get_mut(node.expansion as usize) {
            (e.features, e.splits) = (features, splits);
        }
    }

    /// Fetches ahead what checking each wanted child's first memo candidate reads: the
    /// candidate node, then its parent's record, then the first lines of the parent's rows
    /// (a candidate is compared as `parent rows ∩ feature = rows`). Each wave's misses overlap;
    /// looked up one at a time, they would be paid as a chain per child. `parents` is scratch.
    fn prefetch_candidates(&self, wanted: &[(u32, u32, u32, u64)], parents: &mut Vec<u32>) {
        parents.clear();
        for &(.., hash) in wanted {
            if let Some(found) = self.memo.candidates(hash).next() {
                // The fields a lookup reads (they may straddle two cache lines).
                let node = &self.nodes[found as usize];
                prefetch(&node.expansion);
                prefetch(&node.depth);
                parents.push(found);
            }
        }
        for p in parents.iter_mut() {
            *p = self.nodes[*p as usize].origin.0;
            if let Some(e) = self.expansions.get(*p as usize) {
                prefetch(e);
            }
        }
        for &p in parents.iter() {
            if let Some(words) = self.rows_of_expansion(p).map(Bitset::words) {
                words.iter().step_by(8).take(2).for_each(prefetch);
            }
        }
    }

    /// Gives node `id` its [`Expansion`], holding `rows` (and no features yet).
    fn keep_rows(&mut self, id: NodeId, rows: Bitset) {
        // The rows' heap block with the allocator's header; the record itself is counted with
        // the arena of records.
        self.bytes += rows.heap_bytes() + 16;
        self.nodes[id as usize].expansion = self.expansions.len() as u32;
        self.expansions.push(Expansion {
            support: rows,
            features: FeatureSet::default(),
            splits: Splits::default(),
        });
    }

    /// Refreshes the children of split `split` of the expanded node `parent` (see
    /// [`Graph::refresh`]); returns whether any child's bounds changed. A child shared with
    /// another parent may have improved through it since `parent` last looked.
    pub fn refresh_children(&mut self, parent: NodeId, split: usize) -> bool {
        let mut kids = std::mem::take(&mut self.scratch.kids);
        kids.clear();
        let children = self.splits_of(parent).children(split).iter();
        kids.extend(children.filter_map(|s| s.id()));
        for &c in &kids {
            prefetch(&self.nodes[c as usize]);
        }
        let mut changed = false;
        for &c in &kids {
            let before = self.bounds[c as usize];
            self.refresh(c);
            if self.bounds[c as usize] != before {
                changed = true;
                self.bound_from_child(parent, c);
            }
        }
        self.scratch.kids = kids;
        changed
    }

    /// Recomputes a node's bounds, incumbent and top split from its children's current values,
    /// and drops the splits that can no longer beat the incumbent.
    pub fn refresh(&mut self, id: NodeId) {
        let node = &self.nodes[id as usize];
        if !node.expanded || self.bounds[id as usize].complete() {
            return;
        }
        let e = node.expansion as usize;
        let splits = &self.expansions[e].splits;
        // The children are scattered over the arena: ask for all of them before reading any,
        // so that their cache misses overlap (refresh runs on every node of every path).
        for slot in splits.all_children() {
            if let Some(id) = slot.id() {
                prefetch(&self.bounds[id as usize]);
            }
        }
        let cost = self.scale.split_cost;
        let mut sums = std::mem::take(&mut self.sums);
        sums.clear();
        let (mut lb, mut best) = (node.leaf, NONE);
        for (i, (_, children)) in splits.iter().enumerate() {
            let (mut su, mut sl) = (-cost, -cost);
            for &slot in children {
                let (u, l) = self.slot_bounds(slot);
                su += u;
                sl += l;
            }
            if sl > lb {
                (lb, best) = (sl, i as u32);
            }
            sums.push((su, sl));
        }
        // Drop dominated splits (never the incumbent's), then find the top one.
        let keep = |i: usize, su: S| su > lb || i as u32 == best;
        let leaf = node.leaf;
        if sums.iter().enumerate().any(|(i, &(su, _))| !keep(i, su)) {
            let splits = &mut self.expansions[e].splits;
            let before = splits.bytes();
            *splits = splits.retain(|i| keep(i, sums[i].0));
            let (mut n_kept, mut new_best) = (0, NONE);
            for i in 0..sums.len() {
                if keep(i, sums[i].0) {
                    if i as u32 == best {
                        new_best = n_kept as u32;
                    }
                    sums[n_kept] = sums[i];
                    n_kept += 1;
                }
            }
            self.dominated_splits += (sums.len() - n_kept) as u64;
            sums.truncate(n_kept);
            best = new_best;
            self.bytes = self.bytes - before + splits.bytes();
        }
        let (mut top_ub, mut top) = (S::MIN, NONE);
        for (i, (su, _)) in sums.iter().enumerate() {
            if *su > top_ub {
                (top_ub, top) = (*su, i as u32);
            }
        }
        let top_ub = top_ub.max(leaf);
        let node = &mut self.nodes[id as usize];
        let bounds = &mut self.bounds[id as usize];
        debug_assert!(lb >= bounds.lb, "bounds must tighten monotonically");
        // The split sums may lie above a bound the node had already (a chain bound, see
        // `bound_chain_siblings`): both hold, so the lower stays.
        (bounds.ub, bounds.lb) = (top_ub.max(lb).min(bounds.ub), lb);
        node.incumbent = best;
        node.top = top;
        let splits = &mut self.expansions[e].splits;
        if bounds.complete() && splits.len() > 1 {
            // Only the incumbent's split is needed from now on.
            let before = splits.bytes();
            *splits = splits.retain(|i| i as u32 == best);
            node.incumbent = if best == NONE { NONE } else { 0 };
            node.top = NONE;
            self.bytes = self.bytes - before + splits.bytes();
        }
        self.sums = sums;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The memo takes its tag and home slot from a key's upper half: sparse keys that differ in
    /// one or two rows, anywhere in a long set, must not share it (a hash whose steps only
    /// multiply gave 13 of these 3,015 keys a shared tag).
    #[test]
    fn sparse_keys_differ_in_their_upper_half() {
        let n = 600;
        let mut keys: Vec<Bitset> = (0..n).map(|r| Bitset::from_indices(n, [r])).collect();
        for a in 0..70 {
            for b in a + 1..70 {
                keys.push(Bitset::from_indices(n, [a * 7 % n, b * 7 % n + 1]));
            }
        }
        let mut tags: Vec<u64> = keys.iter().map(|k| key_hash(k, u32::MAX) >> 32).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), keys.len());
        // The depth is part of the key.
        assert_ne!(key_hash(&keys[0], 3), key_hash(&keys[0], 4));
    }

    /// Either form gives the features back in order, and takes the smaller room.
    #[test]
    fn feature_sets_round_trip_in_the_smaller_form() {
        let many: Vec<u32> = (0..200).filter(|f| f % 3 != 1).collect();
        let few = [5, 70, 4000];
        for (features, n) in [(&many[..], 200), (&few[..], 5000), (&[][..], 10)] {
            let set = FeatureSet::new(features, n);
            let mut back = Vec::new();
            set.extend_into(&mut back);
            assert_eq!(back, features);
            assert_eq!(set.is_empty(), features.is_empty());
        }
        assert!(matches!(FeatureSet::new(&many, 200), FeatureSet::Bits(_)));
        assert!(matches!(FeatureSet::new(&few, 5000), FeatureSet::List(_)));
        assert_eq!(FeatureSet::new(&many, 200).bytes(), 4 * 8 + 16);
    }

    /// Lymph holds 15 million nodes; a refresh reads only children's bounds, densely.
    #[test]
    fn a_node_and_its_bounds_fit_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Node<i64>>(), 32);
        assert_eq!(std::mem::size_of::<Bounds<i64>>(), 16);
    }

    /// Columns that partition the rows alike (a copy, a complement, a renaming of the values)
    /// are searched once, by their first index; constant columns not at all.
    #[test]
    fn distinct_partitions_keep_the_first_of_each_group() {
        #[rustfmt::skip]
        let columns: [[u32; 6]; 6] = [
            [0, 0, 1, 1, 2, 2], // three values
            [1, 1, 0, 0, 1, 0], // binary
            [0, 0, 1, 1, 0, 1], // complement of 1
            [2, 2, 0, 0, 1, 1], // 0 renamed
            [3, 3, 3, 3, 3, 3], // constant
            [0, 1, 0, 1, 0, 1], // new
        ];
        let n_rows = 6;
        let codes: Vec<u32> = (0..n_rows)
            .flat_map(|r| columns.iter().map(move |c| c[r]))
            .collect();
        let labels = [0, 1, 0, 1, 0, 1];
        let n_values = [3, 2, 2, 3, 4, 2];
        let data = Dataset::new(&codes, 6, &labels, Some(&n_values), None, None).expect("valid");
        assert_eq!(&distinct_partitions(&data)[..], &[0, 1, 5]);
    }

    /// A child whose bounds lag behind its own expansion (as when it was expanded through
    /// another parent) is brought up to date, and the call says so; once current, it does not.
    #[test]
    fn refreshing_children_reports_a_child_that_lagged() {
        // Labels are the parity of three binary features: every child of the root needs three
        // more splits, so expanding one tightens its upper bound below purification's.
        let codes: Vec<u32> = (0..8u32)
            .flat_map(|r| [r & 1, r >> 1 & 1, r >> 2])
            .collect();
        let labels: Vec<u32> = (0..8u32).map(|r| r.count_ones() % 2).collect();
        let data = Dataset::new(&codes, 3, &labels, None, None, None).expect("valid");
        let scale = Scale::<i64>::new(1, 100, 8, 8).expect("fits");
        let limits = Limits {
            max_depth: None,
            min_samples_leaf: 1,
        };
        let mut g = Graph::new(&data, scale, None, limits);
        let root = g.add_root().expect("the root is open");
        g.expand(root);
        g.refresh(root);
        let top = g.nodes[root as usize].top as usize;
        assert!(!g.refresh_children(root, top), "nothing changed yet");
        let child = g.splits_of(root).children(top)[0]
            .id()
            .expect("an open child");
        let before = g.bounds[child as usize];
        g.expand(child); // its bounds are stale until refreshed
        assert!(g.refresh_children(root, top));
        assert!(g.bounds[child as usize].ub < before.ub);
        assert!(!g.refresh_children(root, top), "now current");
    }

    #[test]
    fn hashing_an_intersection_equals_hashing_it_built() {
        let n = 333;
        let a = Bitset::from_indices(n, (0..n).filter(|r| r % 3 != 0));
        let b = Bitset::from_indices(n, (0..n).filter(|r| r % 5 < 3));
        assert_eq!(key_hash_and(&a, &b, 7), key_hash(&a.and(&b), 7));
    }
}
