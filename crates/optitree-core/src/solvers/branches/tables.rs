//! Recently computed child-count tables of expanded nodes.
//!
//! A node's table holds, for every feature its children may try, the class totals and row
//! count of each child of that feature's split (see `Graph::count_children`). The table of an
//! expanded node gives any one of its children's tables as the node's minus the other
//! children's: when the heavy child of a split needs a look-ahead, the search counts its light
//! siblings instead, which in clustered row order span far fewer words. Tables are kept up to
//! a byte budget and evicted by the clock rule (a table used since the hand last passed it
//! gets a second chance), which approximates least-recently-used at constant cost.

use super::graph::NodeId;
use crate::search::cache::FastMap;

/// Bytes of tables kept at most.
const BUDGET_BYTES: usize = 32 << 20;

/// A clock-evicted cache of tables keyed by node.
#[derive(Default)]
pub struct TableCache {
    entries: Vec<Entry>,
    index: FastMap<NodeId, usize>,
    hand: usize,
    /// Sum of the tables' capacities, in bytes (kept, because the search asks every pass).
    table_bytes: usize,
}

struct Entry {
    node: NodeId,
    used: bool,
    table: Vec<u64>,
}

impl TableCache {
    /// The cached table of `node`.
    pub fn get(&mut self, node: NodeId) -> Option<&[u64]> {
        let e = &mut self.entries[*self.index.get(&node)?];
        e.used = true;
        Some(&e.table)
    }

    /// The cached table of `node`, without counting this as a use.
    pub fn peek(&self, node: NodeId) -> Option<&[u64]> {
        Some(&self.entries[*self.index.get(&node)?].table)
    }

    /// Stores `table` as `node`'s; returns a buffer to reuse for the next table (the evicted
    /// table's when the cache is full, so no table is copied or freed).
    pub fn put(&mut self, node: NodeId, table: Vec<u64>) -> Vec<u64> {
        let capacity = (BUDGET_BYTES / (8 * table.len().max(1))).max(1);
        self.table_bytes += table.capacity() * 8;
        if self.entries.len() < capacity {
            self.index.insert(node, self.entries.len());
            self.entries.push(Entry {
                node,
                used: false,
                table,
            });
            return Vec::new();
        }
        while self.entries[self.hand].used {
            self.entries[self.hand].used = false;
            self.hand = (self.hand + 1) % self.entries.len();
        }
        let slot = self.hand;
        self.hand = (self.hand + 1) % self.entries.len();
        let e = &mut self.entries[slot];
        self.index.remove(&e.node);
        self.index.insert(node, slot);
        (e.node, e.used) = (node, false);
        let evicted = std::mem::replace(&mut e.table, table);
        self.table_bytes -= evicted.capacity() * 8;
        evicted
    }

    /// At least the most bytes held while one more table of `len` cells is put: the table,
    /// and the growth of the entry list and of the index when they are full (old and new
    /// buffers alive together).
    pub fn peak_bytes_within_put(&self, len: usize) -> usize {
        let mut extra = len * 8;
        if self.entries.len() == self.entries.capacity() {
            extra += 2 * self.entries.capacity().max(4) * std::mem::size_of::<Entry>();
        }
        if self.index.len() == self.index.capacity() {
            let grown = 2 * self.index.capacity().max(4);
            extra += grown * (std::mem::size_of::<(NodeId, usize)>() + 1) * 8 / 7;
        }
        self.bytes() + extra
    }

    /// Bytes held by the tables.
    pub fn bytes(&self) -> usize {
        self.table_bytes
            + self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.index.capacity() * (std::mem::size_of::<(NodeId, usize)>() + 1) * 8 / 7
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_a_table_not_used_since_the_hand_passed() {
        let mut cache = TableCache::default();
        let len = BUDGET_BYTES / 8 / 2; // room for two tables
        assert!(cache.put(0, vec![0; len]).is_empty());
        assert!(cache.put(1, vec![1; len]).is_empty());
        assert!(cache.get(0).is_some()); // 0 gets a second chance, 1 goes
        assert_eq!(cache.put(2, vec![2; len]).first(), Some(&1));
        assert!(cache.peek(1).is_none());
        assert_eq!(cache.get(0).map(|t| t[0]), Some(0));
        assert_eq!(cache.get(2).map(|t| t[0]), Some(2));
        assert!(cache.bytes() >= 2 * len * 8);
    }
}
