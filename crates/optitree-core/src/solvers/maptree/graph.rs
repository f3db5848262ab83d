//! The explicit AND/OR graph of the MAPTree search: OR nodes (a row subset at a depth) with their
//! bounds, AND nodes (an OR node split on a feature), and the subproblem cache.
//!
//! OR nodes do not store their rows: each remembers its origin (the node it was first reached
//! from, and the feature/side), so its subset is the intersection of the sides along that chain
//! up to the root. The cache maps a 64-bit hash of (subset, depth) to candidate nodes, and a
//! candidate is accepted only after its subset, rebuilt from its chain, has been compared word
//! for word: two different subproblems are never merged (the reference's linear hash does merge
//! them, spec §2.8 D3). The cache is a [`TaggedIds`] table: 8 bytes per node. (Expanded nodes
//! once kept their rows so that a comparison took one intersection; on mushroom's 127-word rows
//! that was half the graph, and rebuilding from a chain of five sides costs little more.)
//!
//! Parent lists are intrusive singly linked lists threaded through the AND nodes, newest first,
//! which is the order the reference propagates in.

use crate::data::{Bitset, Dataset};
use crate::search::{prefetch, Arena, TaggedIds};

/// Bytes of a first run list: four runs and the allocator's header.
const RUN_BLOCK: usize = 48;

/// Marks "no node".
pub const NONE: u32 = u32::MAX;

/// A subproblem: the best subtree for a row subset rooted at a depth. Most OR nodes are never
/// expanded, so what only expanded nodes need lives in their [`Expansion`]. 32 bytes: the depth
/// is not stored, since it is the origin's plus one ([`Graph::depth`]); tens of millions of
/// these fill the memory limit.
#[derive(Debug, Clone)]
pub struct OrNode {
    pub lb: f64,
    pub ub: f64,
    /// Head of the parent list: `and_id * 2 + side`, or NONE.
    pub first_parent: u32,
    /// Origin: the expansion record of the OR node first split to reach this one (NONE for the
    /// root), and how (`feature * 2 + side`).
    pub origin: u32,
    pub origin_split: u32,
    /// Its expansion record (NONE until expanded).
    pub expansion: u32,
}

/// What an expanded OR node knows about its splits.
#[derive(Debug, Clone)]
pub struct Expansion {
    /// The node's depth.
    pub depth: u32,
    /// The node's origin (as in [`OrNode`]), here so that a walk up an origin chain reads
    /// only expansion records, which are few and dense.
    pub origin: u32,
    pub origin_split: u32,
    /// Closed by the exact small-subproblem solver (fast mode): bounds are exact, no children.
    pub exact: bool,
    /// The AND child achieving `lb` (NONE when the leaf, i.e. `ub`, does; DEFERRED when the
    /// splits not yet materialised do).
    pub best_lb: u32,
    /// The AND child achieving `ub` (NONE when the leaf is best).
    pub best_ub: u32,
    /// AND children, as runs `(first, count)` of consecutive ids (ascending features in a run):
    /// one per round of the fast mode's lazy expansion, and one per split a regrowth grafted.
    pub runs: Vec<(u32, u32)>,
    /// How many of `runs` hold a grafted split (they are not rounds).
    pub grafted_runs: u16,
    /// Number of features that divide the node (its split penalty's `|V|`); the fast mode does
    /// not materialise every split, so this can exceed the number of AND children.
    pub n_valid: u32,
    /// Fast mode: a lower bound on every split neither materialised nor pruned (infinite when
    /// there is none). When it is the node's lower bound, the node is expanded further.
    pub deferred: f64,
    /// Stamp of the last propagation that visited this node.
    pub visited: u32,
    /// Fast mode, for nodes that count their children's dividers (not those ranked by floors),
    /// kept once a node is expanded a second time (it is likely to be again): for each
    /// feature dividing the node, ascending, the numbers of features that divide its `= 0` and
    /// its `= 1` child.
    pub dividers: Vec<(u16, u16)>,
}

/// Marks "the deferred splits" in [`Expansion::best_lb`].
pub const DEFERRED: u32 = u32::MAX - 1;

impl OrNode {
    /// Solved nodes have equal bounds (exact floating-point equality, as in the reference).
    pub fn solved(&self) -> bool {
        self.lb == self.ub
    }

    /// Whether the node has an expansion record (expanded, or closed exactly).
    pub fn expanded(&self) -> bool {
        self.expansion != NONE
    }
}

const _: () = assert!(std::mem::size_of::<OrNode>() == 32);

/// A split of an OR node on a feature.
#[derive(Debug, Clone)]
pub struct AndNode {
    pub feature: u32,
    pub parent: u32,
    /// `child[0]`: rows with feature = 0; `child[1]`: feature = 1.
    pub child: [u32; 2],
    /// Next entry of the parent list of `child[side]`.
    pub next_parent: [u32; 2],
}

/// Node arenas plus the exact-key cache.
pub struct Graph<'a> {
    pub data: &'a Dataset,
    pub or: Arena<OrNode>,
    pub and: Arena<AndNode>,
    /// Chunked, like the nodes: a list that grew by doubling would reserve up to twice its
    /// size at once (40 MB on heart's 600k expansions), past what the memory limit foresees.
    pub expansions: Arena<Expansion>,
    cache: TaggedIds,
    /// Hashes the cache's keys.
    pub hasher: SubsetHasher,
    /// Cache candidates (same upper half of the hash) that held another subset or depth (kept
    /// apart, as they must be).
    pub hash_collisions: u64,
    /// Bytes of the expansion records' divider lists.
    pub divider_bytes: usize,
    /// Heap bytes of the expansions' run lists (see [`Graph::push_run`]), and the longest.
    run_bytes: usize,
    longest_runs: usize,
    /// Reused by [`Graph::find`]'s comparisons.
    compare: CompareScratch<'a>,
}

/// Scratch space for comparing a cache candidate's subset with a looked-up one (a candidate's
/// sides, and their intersection), one per thread, with the collisions it met.
#[derive(Default)]
pub struct CompareScratch<'a> {
    sides: Vec<&'a [u64]>,
    rows: Vec<u64>,
    /// Candidates that held another subset or depth (see [`Graph::hash_collisions`]).
    collisions: u64,
}

/// Hashes of row subsets, linear in the subset: `Σ word_i · key_i` over the integers modulo
/// 2^128 (one widening multiply a word, and no chain from word to word), then mixed with the
/// depth. Linearity makes a split's two children cost one pass: the `= 0` child's words are
/// the node's minus the `= 1` child's (no borrows, the child's bits lie within the node's), so
/// its sum is the node's minus the `= 1` child's sum. (The chained SplitMix-style hash it
/// replaced, three dependent multiplies a word over both children, drew ~10% of mushroom's
/// search.) Two subsets share a sum only if `Σ (a_i − b_i) · key_i ≡ 0 (mod 2^128)`, which
/// random keys make as rare as a 64-bit collision; a collision costs a comparison, never a
/// wrong merge ([`Graph::find`] compares the rows).
pub struct SubsetHasher {
    keys: Vec<u64>,
}

impl SubsetHasher {
    /// Keys for subsets of `n_words` words (fixed: the same subsets hash alike in every run).
    pub fn new(n_words: usize) -> Self {
        let mut rng = crate::search::SplitMix::new(0x243F_6A88_85A3_08D3);
        SubsetHasher {
            keys: (0..n_words).map(|_| rng.next_u64()).collect(),
        }
    }

    /// The linear sum of `rows`.
    pub fn sum(&self, rows: &Bitset) -> u128 {
        let words = rows.words().iter().zip(&self.keys);
        words.fold(0u128, |acc, (&w, &k)| {
            acc.wrapping_add(u128::from(w) * u128::from(k))
        })
    }

    /// The linear sum of `rows ∩ side`, without building it.
    pub fn sum_and(&self, rows: &Bitset, side: &Bitset) -> u128 {
        let words = rows.words().iter().zip(side.words()).zip(&self.keys);
        words.fold(0u128, |acc, ((&w, &s), &k)| {
            acc.wrapping_add(u128::from(w & s) * u128::from(k))
        })
    }

    /// The hash of a subset with linear sum `sum` at `depth`: both halves of the sum and the
    /// depth mixed into every bit (the table reads its top and bottom bits).
    pub fn finish(sum: u128, depth: u32) -> u64 {
        let (low, high) = (sum as u64, (sum >> 64) as u64);
        let mut z = low
            ^ high.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ u64::from(depth).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The hash of `rows` at `depth`.
    pub fn hash(&self, rows: &Bitset, depth: u32) -> u64 {
        Self::finish(self.sum(rows), depth)
    }
}

impl<'a> Graph<'a> {
    /// A graph holding only the root (never cached: no other node has all rows at depth 0).
    pub fn new(data: &'a Dataset, root_lb: f64, root_ub: f64) -> Self {
        let mut g = Graph {
            data,
            or: Arena::new(),
            and: Arena::new(),
            expansions: Arena::new(),
            cache: TaggedIds::default(),
            hasher: SubsetHasher::new(data.all_rows().words().len()),
            hash_collisions: 0,
            divider_bytes: 0,
            run_bytes: 0,
            longest_runs: 0,
            compare: CompareScratch::default(),
        };
        g.push_or(root_lb, root_ub, NONE, 0);
        g
    }

    fn push_or(&mut self, lb: f64, ub: f64, origin: u32, origin_split: u32) -> u32 {
        let id = self.or.push(OrNode {
            lb,
            ub,
            first_parent: NONE,
            origin,
            origin_split,
            expansion: NONE,
        });
        id as u32
    }

    /// The depth of OR node `id`.
    #[inline]
    pub fn depth(&self, id: u32) -> u32 {
        let node = &self.or[id as usize];
        if node.expanded() {
            self.expansions[node.expansion as usize].depth
        } else if node.origin == NONE {
            0 // the root
        } else {
            self.expansions[node.origin as usize].depth + 1
        }
    }

    /// Whether `id` was closed by the exact small-subproblem solver.
    pub fn is_exact(&self, id: u32) -> bool {
        self.or[id as usize].expanded() && self.exp(id).exact
    }

    /// Marks `id` expanded with `n_valid` dividing features and no splits yet.
    pub fn mark_expanded(&mut self, id: u32, n_valid: usize) {
        let record = self.expansions.len() as u32;
        let depth = self.depth(id);
        let node = &self.or[id as usize];
        let (origin, origin_split) = (node.origin, node.origin_split);
        self.expansions.push(Expansion {
            depth,
            origin,
            origin_split,
            exact: false,
            best_lb: NONE,
            best_ub: NONE,
            runs: Vec::new(),
            grafted_runs: 0,
            n_valid: n_valid as u32,
            deferred: f64::INFINITY,
            visited: 0,
            dividers: Vec::new(),
        });
        self.or[id as usize].expansion = record;
    }

    /// The expansion record of expanded node `id`.
    pub fn exp(&self, id: u32) -> &Expansion {
        &self.expansions[self.or[id as usize].expansion as usize]
    }

    /// The expansion record of expanded node `id`, mutable.
    pub fn exp_mut(&mut self, id: u32) -> &mut Expansion {
        let record = self.or[id as usize].expansion as usize;
        &mut self.expansions[record]
    }

    /// The AND children of expanded node `id`, in materialisation order.
    pub fn splits_of(&self, id: u32) -> impl Iterator<Item = u32> + '_ {
        self.exp(id)
            .runs
            .iter()
            .flat_map(|&(first, n)| first..first + n)
    }

    /// Whether OR node `id` holds exactly `rows`: the intersection of the sides along its origin
    /// chain. `sides` and `acc` are scratch space.
    fn holds(
        &self,
        id: u32,
        rows: &Bitset,
        sides: &mut Vec<&'a [u64]>,
        acc: &mut Vec<u64>,
    ) -> bool {
        sides.clear();
        let node = &self.or[id as usize];
        let (mut origin, mut split) = (node.origin, node.origin_split as usize);
        while origin != NONE {
            sides.push(self.data.rows_with(split / 2, split % 2).words());
            let record = &self.expansions[origin as usize];
            (origin, split) = (record.origin, record.origin_split as usize);
        }
        let Some((first, rest)) = sides.split_first() else {
            return *rows == self.data.all_rows(); // the root
        };
        acc.clear();
        acc.extend_from_slice(first);
        for side in rest {
            acc.iter_mut().zip(side.iter()).for_each(|(a, s)| *a &= s);
        }
        acc[..] == *rows.words()
    }

    /// The OR node for `(rows, depth)`, if one exists.
    pub fn find(&mut self, rows: &Bitset, depth: u32, hash: u64) -> Option<u32> {
        let mut compare = std::mem::take(&mut self.compare);
        let found = self.find_with(rows, depth, hash, &mut compare);
        self.count_collisions(&mut compare);
        self.compare = compare;
        found
    }

    /// Moves the collisions `scratch` met (see [`Graph::find_with`]) into
    /// [`Graph::hash_collisions`].
    pub fn count_collisions(&mut self, scratch: &mut CompareScratch<'a>) {
        self.hash_collisions += std::mem::take(&mut scratch.collisions);
    }

    /// [`Graph::find`] with the caller's scratch space (which counts the collisions), for
    /// lookups on several threads at once.
    pub fn find_with(
        &self,
        rows: &Bitset,
        depth: u32,
        hash: u64,
        scratch: &mut CompareScratch<'a>,
    ) -> Option<u32> {
        let CompareScratch {
            sides,
            rows: acc,
            collisions,
        } = scratch;
        self.cache.candidates(hash).find(|&at| {
            let same = self.depth(at) == depth && self.holds(at, rows, sides, acc);
            *collisions += u64::from(!same);
            same
        })
    }

    /// Starts loading the cache slot [`Graph::find`] for `hash` reads first.
    pub fn prefetch_slot(&self, hash: u64) {
        self.cache.prefetch(hash);
    }

    /// Starts loading the first candidate node the slot for `hash` names (call once the slot
    /// is likely in cache, see [`Graph::prefetch_slot`]).
    pub fn prefetch_candidate(&self, hash: u64) {
        if let Some(at) = self.cache.candidates(hash).next() {
            prefetch(&self.or[at as usize]);
        }
    }

    /// Adds a fresh OR node for `(rows, depth)` reached from `origin` by `split`.
    pub fn insert(
        &mut self,
        hash: u64,
        bounds: (f64, f64),
        depth: u32,
        origin: u32,
        split: u32,
    ) -> u32 {
        let record = self.or[origin as usize].expansion;
        debug_assert_ne!(record, NONE, "a node's origin is expanded");
        let id = self.push_or(bounds.0, bounds.1, record, split);
        debug_assert_eq!(
            self.depth(id),
            depth,
            "a child is one level below its origin"
        );
        self.cache.insert(hash, id);
        id
    }

    /// Appends an AND node and links it at the front of both children's parent lists.
    pub fn push_and(&mut self, feature: u32, parent: u32, child: [u32; 2]) -> u32 {
        let id = self.and.len() as u32;
        let next_parent = [
            self.or[child[0] as usize].first_parent,
            self.or[child[1] as usize].first_parent,
        ];
        self.and.push(AndNode {
            feature,
            parent,
            child,
            next_parent,
        });
        self.or[child[0] as usize].first_parent = id * 2;
        self.or[child[1] as usize].first_parent = id * 2 + 1;
        id
    }

    /// The AND nodes that have `id` as a child, newest first.
    pub fn parents(&self, id: u32) -> impl Iterator<Item = u32> + '_ {
        let mut link = self.or[id as usize].first_parent;
        std::iter::from_fn(move || {
            (link != NONE).then(|| {
                let and = link / 2;
                link = self.and[and as usize].next_parent[(link % 2) as usize];
                and
            })
        })
    }

    /// The most bytes the graph may hold by the end of the next expansion, which the memory
    /// limit is checked against: the cache at the peak of a growth (its old and new tables
    /// alive together) and the arenas with the chunks they would open, when that expansion
    /// may cause them. An expansion adds at most two OR nodes, one AND node and a kept
    /// divider (4 bytes) per feature, one expansion record and one run (its list may double).
    pub fn memory(&self) -> usize {
        let f = self.data.n_features();
        let runs = self.run_bytes + (self.longest_runs * 4 * 8).max(RUN_BLOCK);
        let records = self.expansions.peak_bytes_within(1) + runs;
        self.or.peak_bytes_within(2 * f)
            + self.and.peak_bytes_within(f)
            + records
            + self.divider_bytes
            + 4 * f
            + self.cache.peak_bytes_within(2 * f)
    }

    /// Appends `run` to the run list of expanded node `id`, counting the list's heap bytes.
    pub fn push_run(&mut self, id: u32, run: (u32, u32)) {
        let runs = &mut self.exp_mut(id).runs;
        let before = runs.capacity();
        runs.push(run);
        let (after, len) = (runs.capacity(), runs.len());
        if after > before {
            // A new block (with the allocator's header when it is the first).
            let header = if before == 0 { 16 } else { 0 };
            self.run_bytes += (after - before) * 8 + header;
        }
        self.longest_runs = self.longest_runs.max(len);
    }

    /// Bytes the graph holds now (what its statistics report): at most the [`Graph::memory`]
    /// of the last check before the expansion that made it.
    pub fn held_bytes(&self) -> usize {
        let records = self.expansions.reserved_bytes() + self.run_bytes;
        self.or.reserved_bytes()
            + self.and.reserved_bytes()
            + records
            + self.divider_bytes
            + self.cache.bytes()
    }
}
