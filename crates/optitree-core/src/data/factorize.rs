//! Sorted-label factorisation of integer columns by counting, for the input encoder: most
//! categorical data are small integer codes, and counting them is one linear pass where sorting
//! is not.

/// A number type codes are written in: the narrowest that holds every rank spares the encoder
/// a cast and most of the memory (mushroom's codes as bytes: 0.95 MB, as floats 7.6 MB).
pub trait Code: Copy {
    /// Most labels a column may have for its ranks to fit.
    const LABELS: u64;
    /// The rank (below [`Code::LABELS`]) in this type.
    fn from_rank(rank: u32) -> Self;
}

impl Code for u8 {
    const LABELS: u64 = 1 << 8;
    #[inline(always)]
    fn from_rank(rank: u32) -> Self {
        rank as u8
    }
}

impl Code for u16 {
    const LABELS: u64 = 1 << 16;
    #[inline(always)]
    fn from_rank(rank: u32) -> Self {
        rank as u16
    }
}

impl Code for u32 {
    const LABELS: u64 = 1 << 32;
    #[inline(always)]
    fn from_rank(rank: u32) -> Self {
        rank
    }
}

impl Code for f64 {
    const LABELS: u64 = 1 << 32;
    #[inline(always)]
    fn from_rank(rank: u32) -> Self {
        f64::from(rank)
    }
}

/// Every column's labels, and how a cell's code follows from its value: found first, so that
/// the caller can choose the number type of the codes from the number of labels.
#[derive(Debug, Clone)]
pub struct Plan {
    labels: Vec<Vec<i64>>,
    rule: Rule,
}

#[derive(Debug, Clone)]
enum Rule {
    /// No column's values have a gap (0/1 data, small counts): a code is the value's offset
    /// from its column's lowest, which vectorises where table lookups do not (mushroom's
    /// one-hot 950k cells 1.4 -> 1.0 ms).
    Offsets(Vec<i64>),
    /// A code is `rank[base[j] + value]` (wrapping, see [`bases`]).
    Ranks { base: Vec<i64>, rank: Vec<u32> },
}

impl Plan {
    /// The most labels a column has.
    pub fn most_labels(&self) -> usize {
        self.labels.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// The row-major codes of `rows`, which must be the rows the plan was made from, in `C`;
    /// None when some column has more labels than `C` holds.
    pub fn codes<'a, C: Code>(
        &self,
        rows: impl ExactSizeIterator<Item = &'a [i64]>,
    ) -> Option<Vec<C>> {
        if self.most_labels() as u64 > C::LABELS {
            return None;
        }
        let mut codes = Vec::with_capacity(rows.len() * self.labels.len());
        match &self.rule {
            Rule::Offsets(lowest) => {
                for row in rows {
                    let offsets = row.iter().zip(lowest);
                    codes.extend(offsets.map(|(&c, &low)| {
                        debug_assert!((c - low) as u64 <= C::LABELS, "not the plan's rows");
                        C::from_rank((c - low) as u32)
                    }));
                }
            }
            Rule::Ranks { base, rank } => {
                for row in rows {
                    // In range: every value of the column was marked, so it lies within its
                    // column's slots.
                    let ranked = row.iter().zip(base);
                    codes.extend(
                        ranked.map(|(&c, &b)| C::from_rank(rank[b.wrapping_add(c) as usize])),
                    );
                }
            }
        }
        Some(codes)
    }

    /// The labels, once the codes are written.
    pub fn into_labels(self) -> Vec<Vec<i64>> {
        self.labels
    }
}

/// Factorises a matrix given row by row (each row `n_cols` cells long) column by column: every
/// column's labels and the rule for its codes, which [`Plan::codes`] then writes in the
/// caller's number type (the Python encoder wants bytes where they hold the codes, floats
/// elsewhere: converting afterwards was one more pass over a copy of the matrix). Rows apart
/// in memory, as in a column slice of a wider matrix, are read in place. None when there are
/// no rows, a row has another length, or some column's range (max − min + 1) exceeds
/// `max_span`, where counting would cost more than sorting (spans above 2^32 are always
/// refused).
pub fn plan_factorization<'a>(
    rows: impl ExactSizeIterator<Item = &'a [i64]> + Clone,
    n_cols: usize,
    max_span: u64,
) -> Option<Plan> {
    let max_span = max_span.min(1 << 32);
    if n_cols == 0 || rows.len() == 0 || rows.clone().any(|row| row.len() != n_cols) {
        return None;
    }
    if max_span >= 2 {
        if let Some((lowest, highest)) = zero_one_range(rows.clone(), n_cols) {
            // A constant column has one label; a column holding both, two.
            let labels = (lowest.iter().zip(&highest))
                .map(|(&low, &high)| (low..=high).collect())
                .collect();
            return Some(Plan {
                labels,
                rule: Rule::Offsets(lowest),
            });
        }
    }
    if max_span >= SMALL as u64 {
        if let Some(marks) = small_code_marks(rows.clone(), n_cols) {
            return Some(plan_small(marks));
        }
    }
    let (low, start, mut rank) = wide_code_marks(rows, n_cols, max_span)?;
    let mut labels = Vec::with_capacity(n_cols);
    for j in 0..n_cols {
        let mut present = Vec::new();
        for (offset, r) in rank[start[j]..start[j + 1]].iter_mut().enumerate() {
            if *r != 0 {
                *r = present.len() as u32;
                present.push(low[j] + offset as i64);
            }
        }
        labels.push(present);
    }
    let base = bases(&start, &low);
    Some(Plan {
        labels,
        rule: Rule::Ranks { base, rank },
    })
}

/// When every cell is 0 or 1 (binary and one-hot data), each column's lowest and highest value
/// (its AND and its OR), in one pass of bitwise operations, which vectorise where
/// [`small_code_marks`]' indexed bit marks do not. None as soon as a block of rows holds
/// another value, so that other data lose little to the attempt.
#[allow(clippy::type_complexity)]
fn zero_one_range<'a>(
    rows: impl Iterator<Item = &'a [i64]>,
    n_cols: usize,
) -> Option<(Vec<i64>, Vec<i64>)> {
    let (mut all, mut any) = (vec![1i64; n_cols], vec![0i64; n_cols]);
    let mut rows = rows.peekable();
    while rows.peek().is_some() {
        for row in rows.by_ref().take(ZERO_ONE_BLOCK) {
            for ((a, o), &c) in all.iter_mut().zip(any.iter_mut()).zip(row) {
                *a &= c;
                *o |= c;
            }
        }
        // A cell other than 0 or 1 (negative ones too) sets a bit above the lowest.
        if any.iter().fold(0, |bits, &o| bits | o) & !1 != 0 {
            return None;
        }
    }
    Some((all, any))
}

/// Rows between [`zero_one_range`]'s checks.
const ZERO_ONE_BLOCK: usize = 256;

/// Codes of integer cells under labels found at fit time (each column's `labels[j]`, any
/// order, distinct), row-major like `rows`: a cell's code is its value's index among its
/// column's labels, -1 when the column has no such label (predicting on new data). None when a
/// row has another length, or the labels' ranges (max - min + 1, summed over the columns) exceed
/// `max_slots`, where the caller's general path costs less than the table.
///
/// One table lookup a cell, in one pass: numpy's clip, offset and gather took mushroom's
/// 8,124 x 117 cells 7.0 ms (filling fresh 7.6 MB arrays), this 1.2 ms.
pub fn codes_under_labels<'a>(
    rows: impl ExactSizeIterator<Item = &'a [i64]>,
    labels: &[Vec<i64>],
    max_slots: usize,
) -> Option<Vec<f64>> {
    let n_cols = labels.len();
    let max_slots = max_slots.min(1 << 32); // each offset then fits, exactly, in usize
    let mut low = Vec::with_capacity(n_cols);
    let mut start = vec![0usize];
    for column in labels {
        let lo = column.iter().copied().min().unwrap_or(0);
        let hi = column.iter().copied().max().unwrap_or(-1);
        // i128: the span of [i64::MIN, i64::MAX] does not fit in i64.
        let span = (i128::from(hi) - i128::from(lo) + 1).max(0);
        let end = i128::try_from(start[start.len() - 1]).ok()? + span;
        start.push(usize::try_from(end).ok().filter(|&e| e <= max_slots)?);
        low.push(lo);
    }
    let mut table = vec![-1.0; start[n_cols]];
    for (j, column) in labels.iter().enumerate() {
        for (code, &label) in column.iter().enumerate() {
            table[start[j] + label.wrapping_sub(low[j]) as usize] = code as f64;
        }
    }
    let width: Vec<u64> = start.windows(2).map(|w| (w[1] - w[0]) as u64).collect();
    let mut codes = Vec::with_capacity(rows.len() * n_cols);
    for row in rows {
        if row.len() != n_cols {
            return None;
        }
        let cells = row.iter().zip(&low).zip(&width).zip(&start);
        codes.extend(cells.map(|(((&c, &lo), &w), &s)| {
            // Below the lowest label the offset wraps to a huge one: out of range either way.
            let offset = c.wrapping_sub(lo) as u64;
            if offset < w {
                table[s + offset as usize]
            } else {
                -1.0
            }
        }));
    }
    Some(codes)
}

/// Slots per column when every code is in `0..SMALL`.
const SMALL: usize = 256;

/// When every cell is in `0..SMALL` (most categorical data): one bit per value and column, set
/// when the column holds the value. One pass, none spent on the columns' ranges. The marks are
/// bits, 32 bytes a column, so that they stay in the L1 cache: a slot of 4 bytes per value
/// put columns 1 KiB apart, on a handful of the cache's sets, and mushroom's 117 columns
/// evicted one another on every row (its 950k cells took 4.0 ms to factorise, now 1.4). A
/// cell out of range is noted, not branched on.
fn small_code_marks<'a>(
    rows: impl Iterator<Item = &'a [i64]>,
    n_cols: usize,
) -> Option<Vec<[u64; SMALL / 64]>> {
    let mut marks = vec![[0u64; SMALL / 64]; n_cols];
    let mut out_of_range = 0u64;
    for row in rows {
        for (column, &c) in marks.iter_mut().zip(row) {
            out_of_range |= c as u64 / SMALL as u64; // negative codes too
            let c = c as usize % SMALL;
            column[c / 64] |= 1 << (c % 64);
        }
    }
    (out_of_range == 0).then_some(marks)
}

/// [`plan_factorization`] once [`small_code_marks`] has marked every column's values: a
/// cell's code is its value's rank among its column's values (its offset from the lowest,
/// when no column's values have a gap).
fn plan_small(marks: Vec<[u64; SMALL / 64]>) -> Plan {
    let labels: Vec<Vec<i64>> = (marks.iter())
        .map(|column| {
            (0..SMALL as i64)
                .filter(|&v| column[v as usize / 64] >> (v % 64) & 1 == 1)
                .collect()
        })
        .collect();
    let contiguous = labels.iter().all(|l| match (l.first(), l.last()) {
        (Some(&low), Some(&high)) => (high - low) as usize + 1 == l.len(),
        _ => false,
    });
    if contiguous {
        let lowest = labels.iter().map(|l| l[0]).collect();
        return Plan {
            labels,
            rule: Rule::Offsets(lowest),
        };
    }
    // Else each column's ranks over `0..=its largest value`, all columns' in one short table.
    let (mut base, mut rank) = (Vec::with_capacity(labels.len()), Vec::new());
    for present in &labels {
        let at = rank.len();
        base.push(at as i64);
        let span = present.last().map_or(0, |&v| v as usize + 1);
        rank.resize(at + span, 0u32);
        for (r, &v) in present.iter().enumerate() {
            rank[at + v as usize] = r as u32;
        }
    }
    Plan {
        labels,
        rule: Rule::Ranks { base, rank },
    }
}

/// Any codes: each column's lowest value, the start of each column's slots in the table (one
/// slot per value of its range, None when a range exceeds `max_span`), and the table with the
/// slots of the values present marked (1).
#[allow(clippy::type_complexity)]
fn wide_code_marks<'a>(
    rows: impl Iterator<Item = &'a [i64]> + Clone,
    n_cols: usize,
    max_span: u64,
) -> Option<(Vec<i64>, Vec<usize>, Vec<u32>)> {
    let mut low = rows.clone().next()?.to_vec();
    let mut high = low.clone();
    for row in rows.clone() {
        for ((lo, hi), &c) in low.iter_mut().zip(high.iter_mut()).zip(row) {
            *lo = (*lo).min(c);
            *hi = (*hi).max(c);
        }
    }
    // i128: the span of [i64::MIN, i64::MAX] does not fit in i64.
    let spans: Vec<usize> = low
        .iter()
        .zip(&high)
        .map(|(&lo, &hi)| (i128::from(hi) - i128::from(lo) + 1) as u128)
        .map(|span| (span <= u128::from(max_span)).then_some(span as usize))
        .collect::<Option<_>>()?;
    let start: Vec<usize> = std::iter::once(0)
        .chain(spans.iter().scan(0, |end, &s| {
            *end += s;
            Some(*end)
        }))
        .collect();
    let base = bases(&start, &low);
    let mut marks = vec![0u32; start[n_cols]];
    for row in rows {
        for (&c, &b) in row.iter().zip(&base) {
            marks[b.wrapping_add(c) as usize] = 1;
        }
    }
    Some((low, start, marks))
}

/// Cell (r, j) of value c has its slot at `base[j] + c` (wrapping: `base[j]` may be negative,
/// or out of i64 range for extreme columns, but each sum lands in `start[j]..start[j + 1]`).
fn bases(start: &[usize], low: &[i64]) -> Vec<i64> {
    (start.iter().zip(low))
        .map(|(&s, &lo)| (s as i64).wrapping_sub(lo))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes (`codes[r * n_cols + j]`, row-major) and labels of integer columns.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Factorized<C> {
        codes: Vec<C>,
        labels: Vec<Vec<i64>>,
    }

    /// [`plan_factorization`], then [`Plan::codes`] in `C`; None when either gives None.
    fn factorize_rows<'a, C: Code>(
        rows: impl ExactSizeIterator<Item = &'a [i64]> + Clone,
        n_cols: usize,
        max_span: u64,
    ) -> Option<Factorized<C>> {
        let plan = plan_factorization(rows.clone(), n_cols, max_span)?;
        let codes = plan.codes(rows)?;
        Some(Factorized {
            codes,
            labels: plan.into_labels(),
        })
    }

    /// [`factorize_rows`] of a row-major matrix of `n_cols` columns, read in place.
    fn factorize_matrix<C: Code>(
        cells: &[i64],
        n_cols: usize,
        max_span: u64,
    ) -> Option<Factorized<C>> {
        factorize_rows(cells.chunks_exact(n_cols.max(1)), n_cols, max_span)
    }

    #[test]
    fn rows_apart_in_memory_factorise_as_a_contiguous_copy() {
        // The first three columns of a 5-column matrix, row by row, as a column slice reads.
        let wide: Vec<i64> = (0..40).map(|i| i * 7 % 11 - 3).collect();
        let rows: Vec<&[i64]> = wide.chunks_exact(5).map(|row| &row[..3]).collect();
        let copy: Vec<i64> = rows.concat();
        assert_eq!(
            factorize_rows::<u32>(rows.iter().copied(), 3, 4096),
            factorize_matrix::<u32>(&copy, 3, 4096)
        );
        let short = rows.iter().copied();
        assert_eq!(
            factorize_rows::<u32>(short, 2, 4096),
            None,
            "rows of another length"
        );
        assert_eq!(factorize_matrix::<u32>(&copy, 0, 4096), None, "no columns");
    }

    #[test]
    fn ranks_each_column_by_its_sorted_distinct_values() {
        let cells = [7, -3, 2, 5, 7, -3, 9, 0];
        let f = factorize_matrix::<u32>(&cells, 2, 100).unwrap();
        assert_eq!(f.labels, vec![vec![2, 7, 9], vec![-3, 0, 5]]);
        assert_eq!(f.codes, vec![1, 0, 0, 2, 1, 0, 2, 1]);
    }

    #[test]
    fn small_codes_and_shifted_codes_factorise_alike() {
        // 0..255 takes the one-pass table; the same columns shifted by 1000 the ranged one.
        let cells: Vec<i64> = (0..600).map(|i: i64| i * 37 % 251 % (3 + i % 4)).collect();
        let small = factorize_matrix::<u32>(&cells, 4, 4096).unwrap();
        let shifted: Vec<i64> = cells.iter().map(|&c| c + 1000).collect();
        let wide = factorize_matrix::<u32>(&shifted, 4, 4096).unwrap();
        assert_eq!(small.codes, wide.codes);
        for (a, b) in small.labels.iter().zip(&wide.labels) {
            assert_eq!(a.iter().map(|&v| v + 1000).collect::<Vec<_>>(), *b);
        }
        // A code of 256 leaves the one-pass table for the ranged one, with the same result.
        let mut one = cells.clone();
        one[5] = 256;
        let f = factorize_matrix::<u32>(&one, 4, 4096).unwrap();
        assert_eq!(f.labels[1].last(), Some(&256));
    }

    /// Both paths against sorting, column by column: codes up to 255 (the bit marks), and with
    /// a negative code or 256 in some column (the ranged table), on columns of 1 to 9 values.
    #[test]
    fn every_path_ranks_as_sorting_does() {
        let mut word = crate::oracle::xorshift(7);
        for case in 0..300u64 {
            let (n_rows, n_cols) = (1 + (word() % 40) as usize, 1 + (word() % 9) as usize);
            // Every 32nd case steps by 1, so that columns are often without gaps (from 0 to
            // 4: the ranks by offsets), the others by 2 to 32 (ranks by lookup).
            let (step, from) = (1 + case % 32, case % 5);
            let mut cells: Vec<i64> = (0..n_rows * n_cols)
                .map(|_| ((word() % 9) * step + from) as i64 % 256)
                .collect();
            let at = (word() % cells.len() as u64) as usize;
            match case % 3 {
                1 => cells[at] = -1,
                2 => cells[at] = 256,
                _ => {}
            }
            ranks_as_sorting_does(&cells, n_cols);
        }
    }

    /// The 0/1 path (constant columns of either value among them), and 0/1 blocks of rows
    /// followed by a row holding a 2 or a -1, which other paths then factorise.
    #[test]
    fn zero_one_cells_rank_as_sorting_does() {
        let mut word = crate::oracle::xorshift(11);
        for case in 0..200u64 {
            let n_rows = 1 + (word() % (2 * ZERO_ONE_BLOCK as u64 + 10)) as usize;
            let n_cols = 1 + (word() % 9) as usize;
            // Column j % 3 == 0 is constant (0 in even cases, 1 in odd ones), j % 3 == 1
            // constant 1 in even cases and mixed in odd ones, j % 3 == 2 mixed.
            let mut cells: Vec<i64> = (0..n_rows * n_cols)
                .map(|i| match (i % n_cols) as u64 % 3 {
                    0 => (case % 2) as i64,
                    1 => 1 - (case % 2) as i64 * (word() % 2) as i64,
                    _ => (word() % 2) as i64,
                })
                .collect();
            let other = case % 4 == 3;
            if other {
                let at = cells.len() - 1 - (word() % n_cols as u64) as usize;
                cells[at] = if case % 8 == 3 { 2 } else { -1 };
            }
            let rows = cells.chunks_exact(n_cols);
            assert_eq!(
                zero_one_range(rows, n_cols).is_some(),
                !other,
                "the 0/1 path"
            );
            ranks_as_sorting_does(&cells, n_cols);
        }
    }

    /// Each column's labels are its sorted distinct values, and each cell's code their rank.
    fn ranks_as_sorting_does(cells: &[i64], n_cols: usize) {
        let f = factorize_matrix::<u32>(cells, n_cols, 4096).unwrap();
        let floats = factorize_matrix::<f64>(cells, n_cols, 4096).unwrap();
        for j in 0..n_cols {
            let column: Vec<i64> = cells.iter().skip(j).step_by(n_cols).copied().collect();
            let mut sorted = column.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(f.labels[j], sorted);
            for (r, c) in column.iter().enumerate() {
                let rank = sorted.binary_search(c).unwrap() as u32;
                assert_eq!(f.codes[r * n_cols + j], rank);
                assert_eq!(floats.codes[r * n_cols + j], f64::from(rank));
            }
        }
    }

    /// Each cell's index among its column's labels, -1 for a value that is not one of them
    /// (below, between and above the labels, and the extreme integers).
    #[test]
    fn codes_under_labels_index_the_labels() {
        let labels = vec![vec![3, -2, 7], vec![0, 1], vec![]];
        let cells = [
            [3, 0, 5],
            [-2, 1, 0],
            [7, 2, 1],
            [5, -1, 9],
            [i64::MIN, i64::MAX, 0],
        ];
        let rows = cells.iter().map(|r| r.as_slice());
        let codes = codes_under_labels(rows, &labels, 100).unwrap();
        let expected = [
            [0.0, 0.0, -1.0],
            [1.0, 1.0, -1.0],
            [2.0, -1.0, -1.0],
            [-1.0, -1.0, -1.0],
            [-1.0, -1.0, -1.0],
        ];
        assert_eq!(codes, expected.concat());
        // Ranges beyond max_slots (10 + 2 slots here), and rows of another length.
        assert!(codes_under_labels(cells.iter().map(|r| r.as_slice()), &labels, 11).is_none());
        let short = [[1i64, 2]];
        assert!(codes_under_labels(short.iter().map(|r| r.as_slice()), &labels, 100).is_none());
        let extreme = vec![vec![i64::MIN, i64::MAX]];
        assert!(
            codes_under_labels([[0i64]].iter().map(|r| r.as_slice()), &extreme, 1 << 20).is_none()
        );
    }

    /// Codes in the caller's type: bytes up to 256 labels a column, none beyond.
    #[test]
    fn codes_fit_their_type_or_are_refused() {
        // Rows (7r, 7r) for r < 300: 300 labels a column.
        let cells: Vec<i64> = (0..600).map(|i| i / 2 * 7).collect();
        let rows = || cells.chunks_exact(2);
        let plan = plan_factorization(rows(), 2, 1 << 20).unwrap();
        assert_eq!(plan.most_labels(), 300);
        assert!(plan.codes::<u8>(rows()).is_none());
        let wide = plan.codes::<u16>(rows()).unwrap();
        let ranks = plan.codes::<u32>(rows()).unwrap();
        assert!(wide.iter().zip(&ranks).all(|(&w, &r)| u32::from(w) == r));
        let few: Vec<i64> = cells.iter().map(|&c| c % 5).collect();
        let plan = plan_factorization(few.chunks_exact(2), 2, 1 << 20).unwrap();
        let bytes = plan.codes::<u8>(few.chunks_exact(2)).unwrap();
        let floats = plan.codes::<f64>(few.chunks_exact(2)).unwrap();
        assert!(bytes.iter().zip(&floats).all(|(&b, &f)| f64::from(b) == f));
    }

    #[test]
    fn refuses_wide_ranges_and_empty_input() {
        assert_eq!(factorize_matrix::<u32>(&[0, 1_000_000], 1, 4096), None);
        assert_eq!(
            factorize_matrix::<u32>(&[i64::MIN, i64::MAX], 1, u64::MAX),
            None
        );
        assert_eq!(factorize_matrix::<u32>(&[], 3, 10), None);
    }
}
