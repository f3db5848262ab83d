//! Named counters and timings of a search, kept in insertion order so reports are stable.

/// One statistic's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StatValue {
    /// A count (iterations, expansions, bytes).
    Count(u64),
    /// A measurement (seconds, ratios).
    Real(f64),
}

/// An ordered list of named statistics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    entries: Vec<(&'static str, StatValue)>,
}

impl Stats {
    /// No statistics yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn slot(&mut self, name: &'static str, init: StatValue) -> &mut StatValue {
        let i = match self.entries.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                self.entries.push((name, init));
                self.entries.len() - 1
            }
        };
        &mut self.entries[i].1
    }

    /// Sets a count.
    pub fn set_count(&mut self, name: &'static str, v: u64) {
        *self.slot(name, StatValue::Count(0)) = StatValue::Count(v);
    }

    /// Sets a real-valued measurement.
    pub fn set_real(&mut self, name: &'static str, v: f64) {
        *self.slot(name, StatValue::Real(0.0)) = StatValue::Real(v);
    }

    /// Adds to a count (creating it at zero).
    pub fn add(&mut self, name: &'static str, v: u64) {
        if let StatValue::Count(c) = self.slot(name, StatValue::Count(0)) {
            *c += v;
        }
    }

    /// Raises a count to at least `v` (for peaks).
    pub fn max(&mut self, name: &'static str, v: u64) {
        if let StatValue::Count(c) = self.slot(name, StatValue::Count(0)) {
            *c = (*c).max(v);
        }
    }

    /// The value of a statistic, if set.
    pub fn get(&self, name: &str) -> Option<StatValue> {
        self.entries
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    /// All statistics in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, StatValue)> + '_ {
        self.entries.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_accumulates() {
        let mut s = Stats::new();
        s.add("expansions", 2);
        s.set_real("seconds", 0.5);
        s.add("expansions", 3);
        s.max("peak_memory_bytes", 10);
        s.max("peak_memory_bytes", 4);
        let names: Vec<_> = s.iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec!["expansions", "seconds", "peak_memory_bytes"]);
        assert_eq!(s.get("expansions"), Some(StatValue::Count(5)));
        assert_eq!(s.get("peak_memory_bytes"), Some(StatValue::Count(10)));
        assert_eq!(s.get("missing"), None);
    }
}
