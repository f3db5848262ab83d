//! The explicit AND/OR graph of the MAPTree search: OR nodes (a row subset at a depth) with their
//! bounds, AND nodes (an OR node split on a feature), and the subproblem cache.
//!
//! OR nodes do not store their rows; a node that gets children keeps its rows in one flat block
//! list (few nodes are expanded). Every other node remembers its origin (the kept rows of the
//! node it was first reached from, and the feature/side), so its subset is one intersection
//! away. The cache maps a 64-bit hash of (subset, depth) to candidate nodes, and a candidate is
//! accepted only after its subset has been compared word for word: two different subproblems are
//! never merged (the reference's linear hash does merge them, spec §2.8 D3). The cache is a
//! [`TaggedIds`] table: 8 bytes per node.
//!
//! Parent lists are intrusive singly linked lists threaded through the AND nodes, newest first,
//! which is the order the reference propagates in.

use crate::data::{Bitset, Dataset};
use crate::search::{prefetch, Arena, TaggedIds};

/// Words per chunk of kept rows (64 KiB).
const ROWS_CHUNK_WORDS: usize = 1 << 13;

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
    /// Origin: the kept rows (see [`Graph::keep_rows`]) of the OR node first split to reach
    /// this one (NONE for the root), and how (`feature * 2 + side`).
    pub origin_rows: u32,
    pub origin_split: u32,
    /// Its expansion record (NONE until expanded).
    pub expansion: u32,
}

/// What an expanded OR node knows about its splits.
#[derive(Debug, Clone)]
pub struct Expansion {
    /// The node's depth.
    pub depth: u32,
    /// Closed by the exact small-subproblem solver (fast mode): bounds are exact, no children.
    pub exact: bool,
    /// The AND child achieving `lb` (NONE when the leaf, i.e. `ub`, does; DEFERRED when the
    /// splits not yet materialised do).
    pub best_lb: u32,
    /// The AND child achieving `ub` (NONE when the leaf is best).
    pub best_ub: u32,
    /// AND children, as runs `(first, count)` of consecutive ids (ascending features in a run).
    pub runs: Vec<(u32, u32)>,
    /// Number of features that divide the node (its split penalty's `|V|`); the fast mode does
    /// not materialise every split, so this can exceed the number of AND children.
    pub n_valid: u32,
    /// Fast mode: a lower bound on every split neither materialised nor pruned (infinite when
    /// there is none). When it is the node's lower bound, the node is expanded further.
    pub deferred: f64,
    /// Stamp of the last propagation that visited this node.
    pub visited: u32,
    /// Its block of kept rows (NONE until [`Graph::keep_rows`]).
    pub rows_block: u32,
    /// Fast mode, kept once a node is expanded a second time (it is likely to be again): for each
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
    /// Cache candidates (same upper half of the hash) that held another subset or depth (kept
    /// apart, as they must be).
    pub hash_collisions: u64,
    /// Bytes of the expansion records' divider lists.
    pub divider_bytes: usize,
    /// The rows of the nodes that have children, `words` words a block, in chunks of
    /// `blocks_per_chunk` blocks: a list that grew by doubling would need its old and new
    /// buffers at once, a peak the memory limit would not see.
    /// A block is the node's depth, then its rows: a lookup that compares a candidate's depth
    /// and rows reads one place.
    kept_rows: Vec<Box<[u64]>>,
    kept_blocks: usize,
    words: usize,
    blocks_per_chunk: usize,
}

/// Hash of a row subset and a depth (SplitMix-style mixing of every word).
pub fn subset_hash(rows: &Bitset, depth: u32) -> u64 {
    let mut h = 0x243F_6A88_85A3_08D3u64 ^ u64::from(depth).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for (i, &w) in rows.words().iter().enumerate() {
        let mut z = w ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h = (h ^ z ^ (z >> 31))
            .rotate_left(23)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    h
}

impl<'a> Graph<'a> {
    /// A graph holding only the root (never cached: no other node has all rows at depth 0).
    pub fn new(data: &'a Dataset, root_lb: f64, root_ub: f64) -> Self {
        let words = data.n_rows().div_ceil(64);
        let mut g = Graph {
            data,
            or: Arena::new(),
            and: Arena::new(),
            expansions: Arena::new(),
            cache: TaggedIds::default(),
            hash_collisions: 0,
            divider_bytes: 0,
            kept_rows: Vec::new(),
            kept_blocks: 0,
            words,
            blocks_per_chunk: (ROWS_CHUNK_WORDS / (words + 1)).max(1),
        };
        g.push_or(root_lb, root_ub, NONE, 0);
        g
    }

    fn push_or(&mut self, lb: f64, ub: f64, origin_rows: u32, origin_split: u32) -> u32 {
        let id = self.or.push(OrNode {
            lb,
            ub,
            first_parent: NONE,
            origin_rows,
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
        } else if node.origin_rows == NONE {
            0 // the root
        } else {
            self.kept_block(node.origin_rows)[0] as u32 + 1
        }
    }

    /// Kept block `block`: the depth, then the rows.
    #[inline]
    fn kept_block(&self, block: u32) -> &[u64] {
        let stride = self.words + 1;
        let start = block as usize % self.blocks_per_chunk * stride;
        &self.kept_rows[block as usize / self.blocks_per_chunk][start..start + stride]
    }

    /// Whether `id` was closed by the exact small-subproblem solver.
    pub fn is_exact(&self, id: u32) -> bool {
        self.or[id as usize].expanded() && self.exp(id).exact
    }

    /// Marks `id` expanded with `n_valid` dividing features and no splits yet.
    pub fn mark_expanded(&mut self, id: u32, n_valid: usize) {
        let record = self.expansions.len() as u32;
        let depth = self.depth(id);
        self.expansions.push(Expansion {
            depth,
            exact: false,
            best_lb: NONE,
            best_ub: NONE,
            runs: Vec::new(),
            n_valid: n_valid as u32,
            deferred: f64::INFINITY,
            visited: 0,
            rows_block: NONE,
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

    /// Keeps the rows of expanded node `id`: its children are rebuilt from them.
    pub fn keep_rows(&mut self, id: u32, rows: &Bitset) {
        let block = self.kept_blocks;
        let at = block % self.blocks_per_chunk;
        let stride = self.words + 1;
        if at == 0 {
            let chunk = vec![0u64; self.blocks_per_chunk * stride];
            self.kept_rows.push(chunk.into_boxed_slice());
        }
        let depth = u64::from(self.depth(id));
        if let Some(chunk) = self.kept_rows.last_mut() {
            let kept = &mut chunk[at * stride..(at + 1) * stride];
            kept[0] = depth;
            kept[1..].copy_from_slice(rows.words());
        }
        self.kept_blocks += 1;
        self.exp_mut(id).rows_block = block as u32;
    }

    /// Chunks of `blocks` blocks of kept rows (tests cross chunk boundaries with tiny ones);
    /// only before any rows are kept.
    #[cfg(test)]
    pub fn set_blocks_per_chunk(&mut self, blocks: usize) {
        assert_eq!(self.kept_blocks, 0, "rows already kept");
        self.blocks_per_chunk = blocks.max(1);
    }

    /// Whether OR node `id` holds exactly `rows` (compared without building its rows).
    fn holds(&self, id: u32, rows: &Bitset) -> bool {
        let node = &self.or[id as usize];
        if node.origin_rows == NONE {
            return *rows == self.data.all_rows(); // the root
        }
        let parent = &self.kept_block(node.origin_rows)[1..];
        let split = node.origin_split;
        let side = (self.data).rows_with((split / 2) as usize, (split % 2) as usize);
        (parent.iter().zip(side.words()))
            .zip(rows.words())
            .all(|((p, s), r)| p & s == *r)
    }

    /// The OR node for `(rows, depth)`, if one exists.
    pub fn find(&mut self, rows: &Bitset, depth: u32, hash: u64) -> Option<u32> {
        let mut misses = 0;
        let found = self.cache.candidates(hash).find(|&at| {
            let same = self.depth(at) == depth && self.holds(at, rows);
            misses += u64::from(!same);
            same
        });
        self.hash_collisions += misses;
        found
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
        let origin_rows = self.exp(origin).rows_block;
        debug_assert_ne!(origin_rows, NONE, "a node's origin keeps its rows");
        let id = self.push_or(bounds.0, bounds.1, origin_rows, split);
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

    /// Bytes held by the graph, counting the cache at the peak of a growth (its old and new
    /// tables alive together) when the next expansion may cause one: the memory limit must hold
    /// through that peak too. An expansion adds at most two nodes per feature.
    pub fn memory(&self) -> usize {
        let table = self.cache.peak_bytes_within(2 * self.data.n_features());
        // A run list is one small heap block: four runs plus the allocator's header.
        let records = self.expansions.bytes() + self.expansions.len() * 48;
        let rows = self.kept_rows.len() * self.blocks_per_chunk * (self.words + 1) * 8;
        self.or.bytes() + self.and.bytes() + records + self.divider_bytes + table + rows
    }
}
