//! The compact categorical dataset every solver searches.
//!
//! Each feature `f` takes codes `0..n_values[f]`. For every (feature, value) pair the dataset keeps
//! the bitset of rows holding that value, and for every class the bitset of rows of that class, so
//! the class distribution of any row subset is a handful of AND + popcount passes
//! (`n_classes` word loops), and a split's children are ANDs of bitsets.
//!
//! Invariants: every code is `< n_values[f]`, every label `< n_classes`, weights (when given)
//! are finite, non-negative and not all zero (checked by [`Table::new`]); for each feature the
//! value bitsets partition the rows, and the class bitsets partition the rows (as
//! [`Dataset::from_table`] builds them).

use crate::data::bitset::Bitset;
use crate::data_err;
use crate::error::Result;

/// Column-major codes (`codes[f * n_rows + r]`), one byte a cell when they come as bytes (the
/// estimators pass bytes whenever every feature has at most 256 values): binarised numeric
/// columns make tables of 10^8 cells, and four bytes a cell then cost gigabytes and seconds to
/// copy.
#[derive(Debug, Clone)]
pub enum Codes {
    /// One byte a cell.
    Narrow(Vec<u8>),
    /// Four bytes a cell.
    Wide(Vec<u32>),
}

impl From<Vec<u8>> for Codes {
    fn from(codes: Vec<u8>) -> Self {
        Codes::Narrow(codes)
    }
}

impl From<Vec<u32>> for Codes {
    fn from(codes: Vec<u32>) -> Self {
        Codes::Wide(codes)
    }
}

impl Codes {
    fn len(&self) -> usize {
        match self {
            Codes::Narrow(c) => c.len(),
            Codes::Wide(c) => c.len(),
        }
    }

    /// The `len` codes from `start`.
    fn slice(&self, start: usize, len: usize) -> Column<'_> {
        match self {
            Codes::Narrow(c) => Column::Narrow(&c[start..start + len]),
            Codes::Wide(c) => Column::Wide(&c[start..start + len]),
        }
    }
}

/// The codes of one feature, for every row.
#[derive(Debug, Clone, Copy)]
pub enum Column<'a> {
    /// One byte a row.
    Narrow(&'a [u8]),
    /// Four bytes a row.
    Wide(&'a [u32]),
}

impl<'a> Column<'a> {
    /// Number of rows.
    pub fn len(self) -> usize {
        match self {
            Column::Narrow(c) => c.len(),
            Column::Wide(c) => c.len(),
        }
    }

    /// Whether there are no rows (a table always has some).
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The code of row `r`.
    pub fn get(self, r: usize) -> u32 {
        match self {
            Column::Narrow(c) => u32::from(c[r]),
            Column::Wide(c) => c[r],
        }
    }

    /// The codes in row order. (Loops over many rows go through [`Column::for_each`], which
    /// chooses the width once.)
    pub fn iter(self) -> impl Iterator<Item = u32> + 'a {
        let (narrow, wide): (&[u8], &[u32]) = match self {
            Column::Narrow(c) => (c, &[]),
            Column::Wide(c) => (&[], c),
        };
        narrow
            .iter()
            .map(|&c| u32::from(c))
            .chain(wide.iter().copied())
    }

    /// Calls `f(row, code)` for every row in order, with the width chosen once for the loop.
    #[inline]
    pub fn for_each(self, mut f: impl FnMut(usize, u32)) {
        match self {
            Column::Narrow(c) => c.iter().enumerate().for_each(|(r, &v)| f(r, u32::from(v))),
            Column::Wide(c) => c.iter().enumerate().for_each(|(r, &v)| f(r, v)),
        }
    }

    /// The bitsets of the rows holding each value `0..n_values` (see [`Bitset::partition`]).
    fn partition(self, n_values: usize) -> Vec<Bitset> {
        match self {
            Column::Narrow(c) if n_values == 2 => Bitset::partition_binary_bytes(c),
            Column::Narrow(c) => Bitset::partition(c, n_values),
            Column::Wide(c) => Bitset::partition(c, n_values),
        }
    }

    /// The largest code (0 for no rows), in a pass that vectorises.
    fn largest(self) -> u32 {
        match self {
            Column::Narrow(c) => u32::from(c.iter().fold(0, |m, &v| m.max(v))),
            Column::Wide(c) => c.iter().fold(0, |m, &v| m.max(v)),
        }
    }
}

/// The checked codes, labels and weights of a dataset, without its bitsets: what a solver that
/// reorders the rows (Branches) starts from, so that the bitsets are built once, in its order.
#[derive(Debug, Clone)]
pub struct Table {
    n_rows: usize,
    n_classes: usize,
    n_values: Vec<usize>,
    labels: Vec<u32>,
    codes: Codes,
    weights: Option<Vec<f64>>,
}

impl Table {
    /// Checks column-major codes (`codes[f * n_rows + r]`, taken over without a copy), labels and
    /// weights (the invariants in the module docs).
    ///
    /// `n_values`, when given, fixes the number of categories per feature (codes must be below
    /// it); otherwise it is `max code + 1`. `n_classes`, when given, must exceed every label.
    pub fn new(
        codes: impl Into<Codes>,
        n_features: usize,
        labels: Vec<u32>,
        n_values: Option<&[usize]>,
        n_classes: Option<usize>,
        weights: Option<Vec<f64>>,
    ) -> Result<Self> {
        let codes: Codes = codes.into();
        let n_rows = labels.len();
        check_shape(codes.len(), n_rows, n_features)?;
        let column = |f: usize| codes.slice(f * n_rows, n_rows);
        let largest = |f: usize| column(f).largest() as usize;
        let n_values: Vec<usize> = match n_values {
            Some(v) if v.len() != n_features => {
                return data_err!(
                    "n_values has {} entries for {} features",
                    v.len(),
                    n_features
                )
            }
            Some(v) => {
                for (f, &nv) in v.iter().enumerate() {
                    if largest(f) >= nv {
                        let r = column(f).iter().position(|c| c as usize >= nv);
                        let r = r.unwrap_or(0);
                        let c = column(f).get(r);
                        return data_err!(
                            "feature {f} has code {c} at row {r}; codes must be in 0..{nv}"
                        );
                    }
                }
                v.to_vec()
            }
            None => (0..n_features).map(|f| largest(f) + 1).collect(),
        };
        let max_label = labels.iter().copied().max().unwrap_or(0) as usize;
        let n_classes = n_classes.unwrap_or(max_label + 1);
        if max_label >= n_classes {
            let row = labels
                .iter()
                .position(|&l| l as usize >= n_classes)
                .unwrap_or(0);
            return data_err!(
                "label {} at row {} is not below the number of classes {}",
                labels[row],
                row,
                n_classes
            );
        }
        if let Some(w) = &weights {
            check_weights(w, n_rows)?;
        }
        Ok(Table {
            n_rows,
            n_classes,
            n_values,
            labels,
            codes,
            weights,
        })
    }

    /// [`Table::new`] of row-major codes (`codes[r * n_features + f]`).
    pub fn from_row_major(
        codes: &[u32],
        n_features: usize,
        labels: &[u32],
        n_values: Option<&[usize]>,
        n_classes: Option<usize>,
        weights: Option<Vec<f64>>,
    ) -> Result<Self> {
        check_shape(codes.len(), labels.len(), n_features)?;
        let columns =
            column_major_codes(codes, n_features, |&c| Some(c)).expect("u32 codes always convert");
        let labels = labels.to_vec();
        Table::new(columns, n_features, labels, n_values, n_classes, weights)
    }

    /// The table with its rows reordered in place: row `i` of the result is row `order[i]` of
    /// this one (labels and weights follow). `order` must be a permutation of `0..n_rows`.
    /// One column of scratch, not a second copy of the codes (binarised numeric columns make
    /// them gigabytes).
    pub fn into_rows_in_order(mut self, order: &[usize]) -> Result<Table> {
        check_permutation(order, self.n_rows)?;
        match &mut self.codes {
            Codes::Narrow(codes) => permute_columns(codes, order),
            Codes::Wide(codes) => permute_columns(codes, order),
        }
        self.labels = order.iter().map(|&r| self.labels[r]).collect();
        if let Some(w) = &mut self.weights {
            *w = order.iter().map(|&r| w[r]).collect();
        }
        Ok(self)
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }
    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.n_values.len()
    }
    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }
    /// Number of categories of feature `f`.
    pub fn n_values(&self, f: usize) -> usize {
        self.n_values[f]
    }
    /// Row labels.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }
    /// The codes of feature `f` for all rows.
    pub fn column(&self, f: usize) -> Column<'_> {
        self.codes.slice(f * self.n_rows, self.n_rows)
    }
    /// Sample weights, if any (None means every row weighs 1).
    pub fn weights(&self) -> Option<&[f64]> {
        self.weights.as_deref()
    }
}

/// Each `order.len()`-row column of `codes` reordered in place (row `i` becomes row
/// `order[i]`), through one column of scratch.
fn permute_columns<T: Copy>(codes: &mut [T], order: &[usize]) {
    let mut scratch = Vec::with_capacity(order.len());
    for column in codes.chunks_exact_mut(order.len()) {
        scratch.clear();
        scratch.extend(order.iter().map(|&r| column[r]));
        column.copy_from_slice(&scratch);
    }
}

/// A categorical dataset with per-(feature, value) and per-class row bitsets.
#[derive(Debug, Clone)]
pub struct Dataset {
    table: Table,
    value_offset: Vec<usize>,
    value_rows: Vec<Bitset>,
    class_rows: Vec<Bitset>,
}

impl Dataset {
    /// Builds a dataset from row-major codes (`codes[r * n_features + f]`) and labels (see
    /// [`Table::new`] for `n_values` and `n_classes`).
    pub fn new(
        codes: &[u32],
        n_features: usize,
        labels: &[u32],
        n_values: Option<&[usize]>,
        n_classes: Option<usize>,
        weights: Option<Vec<f64>>,
    ) -> Result<Self> {
        let table = Table::from_row_major(codes, n_features, labels, n_values, n_classes, weights);
        table.map(Self::from_table)
    }

    /// The dataset of a checked table: builds the bitsets.
    pub fn from_table(table: Table) -> Self {
        let n_rows = table.n_rows;
        let mut value_offset = Vec::with_capacity(table.n_values.len() + 1);
        let mut value_rows = Vec::with_capacity(table.n_values.iter().sum());
        for (f, &nv) in table.n_values.iter().enumerate() {
            value_offset.push(value_rows.len());
            value_rows.extend(table.column(f).partition(nv));
        }
        value_offset.push(value_rows.len());
        let class_rows = Bitset::partition(&table.labels, table.n_classes);
        debug_assert_eq!(n_rows, table.labels.len());
        Dataset {
            table,
            value_offset,
            value_rows,
            class_rows,
        }
    }

    /// The codes, labels and weights.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.table.n_rows
    }
    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.table.n_features()
    }
    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.table.n_classes
    }
    /// Number of categories of feature `f`.
    pub fn n_values(&self, f: usize) -> usize {
        self.table.n_values[f]
    }
    /// Row labels.
    pub fn labels(&self) -> &[u32] {
        &self.table.labels
    }
    /// Code of row `r` in feature `f`.
    pub fn code(&self, r: usize, f: usize) -> u32 {
        self.table.column(f).get(r)
    }
    /// The codes of feature `f` for all rows.
    pub fn column(&self, f: usize) -> Column<'_> {
        self.table.column(f)
    }
    /// Sample weights, if any (None means every row weighs 1).
    pub fn weights(&self) -> Option<&[f64]> {
        self.table.weights()
    }
    /// Rows holding value `v` of feature `f`.
    pub fn rows_with(&self, f: usize, v: usize) -> &Bitset {
        &self.value_rows[self.value_offset[f] + v]
    }
    /// The index of value `v` of feature `f` among the values of all features (feature by
    /// feature, each in value order): one number for a (feature, value) pair.
    pub fn value_index(&self, f: usize, v: usize) -> usize {
        self.value_offset[f] + v
    }
    /// Rows holding the value of this [`Dataset::value_index`].
    pub fn rows_of_value(&self, index: usize) -> &Bitset {
        &self.value_rows[index]
    }
    /// Rows of class `k`.
    pub fn rows_of_class(&self, k: usize) -> &Bitset {
        &self.class_rows[k]
    }
    /// The set of all rows.
    pub fn all_rows(&self) -> Bitset {
        Bitset::full(self.n_rows())
    }

    /// Unweighted class counts of `subset` (one AND + popcount pass per class).
    pub fn class_counts(&self, subset: &Bitset) -> Vec<u64> {
        self.class_rows
            .iter()
            .map(|c| c.intersection_count(subset))
            .collect()
    }

    /// Class totals of `subset`: weighted when the dataset has weights, else exact counts as f64.
    pub fn class_weights(&self, subset: &Bitset) -> Vec<f64> {
        match &self.table.weights {
            None => self
                .class_counts(subset)
                .into_iter()
                .map(|c| c as f64)
                .collect(),
            Some(w) => {
                let mut out = vec![0.0; self.table.n_classes];
                for r in subset.iter() {
                    out[self.table.labels[r] as usize] += w[r];
                }
                out
            }
        }
    }

    /// Class totals of every child of a split of `subset` on feature `f`: `out[v][k]`.
    /// One pass over the subset's rows, no bitset allocation.
    pub fn split_class_weights(&self, subset: &Bitset, f: usize) -> Vec<Vec<f64>> {
        let mut out = vec![vec![0.0; self.table.n_classes]; self.table.n_values[f]];
        let col = self.column(f);
        for r in subset.iter() {
            let w = self.table.weights.as_ref().map_or(1.0, |w| w[r]);
            out[col.get(r) as usize][self.table.labels[r] as usize] += w;
        }
        out
    }
}

/// Column-major codes of a row-major matrix of `n_features` columns, each cell converted by
/// `code`; the position `(row, feature)` of the first cell it refuses.
pub fn column_major_codes<T, C: Copy + Default>(
    cells: &[T],
    n_features: usize,
    code: impl Fn(&T) -> Option<C>,
) -> std::result::Result<Vec<C>, (usize, usize)> {
    // Transposed in square tiles: cell by cell, every write jumps a whole column ahead, and a
    // 3,000 x 30,000 matrix of binarised thresholds took a second.
    const TILE: usize = 64;
    let n_rows = cells.len() / n_features.max(1);
    let mut columns = vec![C::default(); n_rows * n_features];
    for r0 in (0..n_rows).step_by(TILE) {
        for f0 in (0..n_features).step_by(TILE) {
            for f in f0..(f0 + TILE).min(n_features) {
                let column = &mut columns[f * n_rows..(f + 1) * n_rows];
                for r in r0..(r0 + TILE).min(n_rows) {
                    match code(&cells[r * n_features + f]) {
                        Some(c) => column[r] = c,
                        None => return Err(first_refused(cells, n_features, &code)),
                    }
                }
            }
        }
    }
    Ok(columns)
}

/// The column-major copy of a row-major byte matrix of `n_features` columns (codes of at most
/// 256 values, the common case). Blocks of 8 rows × 8 columns are transposed in eight 64-bit
/// registers, a byte at a time only at the edges: the generic transpose moved one byte per
/// load and store (converting mushroom's one-hot table, 8,124 × 117, took 0.69 ms, now 0.46).
pub fn transpose_bytes(cells: &[u8], n_features: usize) -> Vec<u8> {
    let n_rows = cells.len() / n_features.max(1);
    let mut columns = vec![0u8; n_rows * n_features];
    let (rows8, features8) = (n_rows / 8 * 8, n_features / 8 * 8);
    let mut block = [0u64; 8];
    for r0 in (0..rows8).step_by(8) {
        for f0 in (0..features8).step_by(8) {
            for (i, word) in block.iter_mut().enumerate() {
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(&cells[(r0 + i) * n_features + f0..][..8]);
                *word = u64::from_le_bytes(bytes);
            }
            transpose_8x8(&mut block);
            for (j, word) in block.iter().enumerate() {
                columns[(f0 + j) * n_rows + r0..][..8].copy_from_slice(&word.to_le_bytes());
            }
        }
    }
    for r in 0..n_rows {
        let first = if r < rows8 { features8 } else { 0 };
        for f in first..n_features {
            columns[f * n_rows + r] = cells[r * n_features + f];
        }
    }
    columns
}

/// Transposes the 8 × 8 bytes of `rows` (byte `j` of word `i` is row `i`, column `j`) in
/// place, by swapping 4 × 4, then 2 × 2, then 1 × 1 blocks across the diagonal.
fn transpose_8x8(rows: &mut [u64; 8]) {
    for (half, mask) in [
        (4, 0xffff_ffffu64),
        (2, 0x0000_ffff_0000_ffff),
        (1, 0x00ff_00ff_00ff_00ff),
    ] {
        let shift = 8 * half as u32;
        for i in (0..8).filter(|i| i & half == 0) {
            let t = ((rows[i] >> shift) ^ rows[i + half]) & mask;
            rows[i] ^= t << shift;
            rows[i + half] ^= t;
        }
    }
}

/// Column-major codes of a matrix already held column by column (`cells[f * n_rows + r]`, as
/// numpy's Fortran order): a converting copy, no transpose. On a refused cell, its position
/// `(row, feature)`, the first in row-major order as [`column_major_codes`] reports it.
pub fn codes_of_columns<T, C: Default>(
    cells: &[T],
    n_rows: usize,
    code: impl Fn(&T) -> Option<C>,
) -> std::result::Result<Vec<C>, (usize, usize)> {
    // Checked first, then converted: two passes that vectorise (a copy for one-byte codes),
    // where one that stops at a refused cell does not.
    if cells.iter().any(|cell| code(cell).is_none()) {
        let n_features = cells.len() / n_rows.max(1);
        let refused = |r: usize, f: usize| code(&cells[f * n_rows + r]).is_none();
        let first = (0..n_rows)
            .flat_map(|r| (0..n_features).map(move |f| (r, f)))
            .find(|&(r, f)| refused(r, f));
        return Err(first.unwrap_or((0, 0)));
    }
    Ok(cells
        .iter()
        .map(|cell| code(cell).unwrap_or_default())
        .collect())
}

/// The first cell, in row-major order, that `code` refuses (one exists).
fn first_refused<T, C>(
    cells: &[T],
    n_features: usize,
    code: &impl Fn(&T) -> Option<C>,
) -> (usize, usize) {
    let i = cells.iter().position(|c| code(c).is_none()).unwrap_or(0);
    (i / n_features.max(1), i % n_features.max(1))
}

fn check_permutation(order: &[usize], n: usize) -> Result<()> {
    let mut seen = Bitset::empty(n);
    for &r in order {
        if r >= n || seen.contains(r) {
            return data_err!("a row order must be a permutation of 0..{n}");
        }
        seen.insert(r);
    }
    if order.len() != n {
        return data_err!("a row order of {} entries for {n} rows", order.len());
    }
    Ok(())
}

fn check_shape(n_cells: usize, n_rows: usize, n_features: usize) -> Result<()> {
    if n_rows == 0 {
        return data_err!("the dataset has no rows; at least one row is needed");
    }
    if n_cells != n_rows * n_features {
        return data_err!(
            "the code matrix has {n_cells} entries but {n_rows} rows x {n_features} features \
             were declared"
        );
    }
    Ok(())
}

fn check_weights(w: &[f64], n_rows: usize) -> Result<()> {
    if w.len() != n_rows {
        return data_err!(
            "sample_weight has {} entries but the data have {} rows",
            w.len(),
            n_rows
        );
    }
    if let Some(i) = w.iter().position(|x| !x.is_finite() || *x < 0.0) {
        return data_err!(
            "sample_weight[{i}] = {} is not allowed; weights must be finite and >= 0",
            w[i]
        );
    }
    if w.iter().all(|&x| x == 0.0) {
        return data_err!(
            "every sample_weight is zero; at least one row must have positive weight"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use proptest::prelude::*;

    #[test]
    fn byte_transpose_matches_the_cell_by_cell_one() {
        let mut next = crate::oracle::xorshift(0x5eed_1234_abcd_0001);
        for (n_rows, n_features) in [
            (1, 1),
            (8, 8),
            (9, 17),
            (64, 8),
            (100, 117),
            (7, 3),
            (16, 1),
        ] {
            let cells: Vec<u8> = (0..n_rows * n_features).map(|_| next() as u8).collect();
            let expected = column_major_codes(&cells, n_features, |&c| Some(c)).expect("bytes");
            assert_eq!(
                transpose_bytes(&cells, n_features),
                expected,
                "{n_rows} x {n_features}"
            );
        }
    }

    fn tiny() -> Dataset {
        // 4 rows, 2 features (3 and 2 categories), 2 classes.
        let codes = [0, 1, 2, 0, 1, 1, 2, 1];
        Dataset::new(&codes, 2, &[0, 1, 1, 0], None, None, None).expect("valid")
    }

    #[test]
    fn bitsets_partition_rows_and_classes() {
        let d = tiny();
        assert_eq!((d.n_rows(), d.n_features(), d.n_classes()), (4, 2, 2));
        assert_eq!(d.rows_with(0, 2).iter().collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(d.rows_with(1, 1).iter().collect::<Vec<_>>(), vec![0, 2, 3]);
        assert_eq!(d.class_counts(&d.all_rows()), vec![2, 2]);
        assert_eq!(
            d.split_class_weights(&d.all_rows(), 0),
            vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![1.0, 1.0]]
        );
    }

    #[test]
    fn bad_inputs_are_named() {
        let e = Dataset::new(&[0, 5], 1, &[0, 0], Some(&[3]), None, None).unwrap_err();
        assert_eq!(
            e,
            Error::Data("feature 0 has code 5 at row 1; codes must be in 0..3".into())
        );
        let e = Dataset::new(&[0, 1], 1, &[0, 4], None, Some(2), None).unwrap_err();
        assert!(e.to_string().contains("label 4 at row 1"), "{e}");
        let e = Dataset::new(&[], 1, &[], None, None, None).unwrap_err();
        assert!(e.to_string().contains("no rows"));
        let e = Dataset::new(&[0, 1], 1, &[0, 1], None, None, Some(vec![1.0, -1.0])).unwrap_err();
        assert!(e.to_string().contains("sample_weight[1] = -1"), "{e}");
        let e = Dataset::new(&[0, 1], 1, &[0, 1], None, None, Some(vec![0.0, 0.0])).unwrap_err();
        assert!(e.to_string().contains("every sample_weight is zero"));
    }

    /// Every bitset, code and label of `a` and `b` agree.
    fn assert_same(a: &Dataset, b: &Dataset) {
        assert_eq!(
            (a.n_rows(), a.n_features(), a.n_classes()),
            (b.n_rows(), b.n_features(), b.n_classes())
        );
        assert_eq!(a.labels(), b.labels());
        assert_eq!(a.weights(), b.weights());
        for f in 0..a.n_features() {
            assert!(a.column(f).iter().eq(b.column(f).iter()), "feature {f}");
            for v in 0..a.n_values(f) {
                assert_eq!(
                    a.rows_with(f, v),
                    b.rows_with(f, v),
                    "feature {f} value {v}"
                );
            }
        }
        for k in 0..a.n_classes() {
            assert_eq!(a.rows_of_class(k), b.rows_of_class(k));
        }
    }

    #[test]
    fn tiled_transpose_matches_cell_by_cell_and_names_the_first_refused_cell() {
        for (n_rows, n_features) in [(1, 1), (3, 200), (130, 65), (64, 64), (200, 3), (0, 4)] {
            let cells: Vec<i64> = (0..n_rows * n_features)
                .map(|i| (i * 7 % 11) as i64)
                .collect();
            let columns = column_major_codes(&cells, n_features, |&c| u32::try_from(c).ok())
                .expect("all codes convert");
            for r in 0..n_rows {
                for f in 0..n_features {
                    assert_eq!(columns[f * n_rows + r] as i64, cells[r * n_features + f]);
                }
            }
            // The same matrix held column by column converts to the same codes.
            let by_column: Vec<i64> = columns.iter().map(|&c| i64::from(c)).collect();
            let widened = codes_of_columns(&by_column, n_rows, |&c| u32::try_from(c).ok());
            assert_eq!(widened.as_ref(), Ok(&columns));
            if n_rows * n_features > 2 {
                // Two bad cells: the one first in row-major order is named, whatever the tiles.
                let mut bad = cells.clone();
                let (late, early) = (n_rows * n_features - 1, (n_rows / 2) * n_features + 1);
                bad[late] = -1;
                bad[early.min(late)] = -2;
                let first = early.min(late);
                let named = Err((first / n_features, first % n_features));
                assert_eq!(
                    column_major_codes(&bad, n_features, |&c| u32::try_from(c).ok()),
                    named
                );
                let mut bad_by_column = by_column.clone();
                for (i, &cell) in bad.iter().enumerate().filter(|(_, &c)| c < 0) {
                    bad_by_column[(i % n_features) * n_rows + i / n_features] = cell;
                }
                assert_eq!(
                    codes_of_columns(&bad_by_column, n_rows, |&c| u32::try_from(c).ok()),
                    named
                );
            }
        }
    }

    #[test]
    fn column_major_input_and_reordered_rows_give_the_same_dataset() {
        // 150 rows (three words, the last partial), 3 features, 3 classes, weights.
        let n = 150;
        let rows: Vec<[u32; 3]> = (0..n).map(|r| [r % 4, (r * 7) % 3, r / 50]).collect();
        let codes: Vec<u32> = rows.iter().flatten().copied().collect();
        let labels: Vec<u32> = (0..n).map(|r| (r * 5) % 3).collect();
        let weights: Vec<f64> = (0..n).map(|r| f64::from(r % 5)).collect();
        let data = Dataset::new(&codes, 3, &labels, None, None, Some(weights.clone())).unwrap();
        let columns = column_major_codes(&codes, 3, |&c| Some(c)).unwrap();
        assert!(data
            .column(0)
            .iter()
            .eq(columns[..n as usize].iter().copied()));
        let from_columns = Table::new(
            columns,
            3,
            labels.clone(),
            None,
            None,
            Some(weights.clone()),
        );
        assert_same(&data, &Dataset::from_table(from_columns.unwrap()));
        // Reversed rows: the same as building from the reversed input.
        let order: Vec<usize> = (0..n as usize).rev().collect();
        let reordered =
            Dataset::from_table(data.table().clone().into_rows_in_order(&order).unwrap());
        let rev_codes: Vec<u32> = order.iter().flat_map(|&r| rows[r]).collect();
        let rev_labels: Vec<u32> = order.iter().map(|&r| labels[r]).collect();
        let rev_weights: Vec<f64> = order.iter().map(|&r| weights[r]).collect();
        let rebuilt = Dataset::new(&rev_codes, 3, &rev_labels, None, None, Some(rev_weights));
        assert_same(&reordered, &rebuilt.unwrap());
        assert!(data.table().clone().into_rows_in_order(&[0, 0]).is_err());
        // One-byte codes: the same dataset, reordered the same way.
        let narrow: Vec<u8> = columns_of(&data).iter().map(|&c| c as u8).collect();
        let narrow = Table::new(narrow, 3, labels.clone(), None, None, Some(weights.clone()));
        let narrow = narrow.unwrap();
        assert!(matches!(narrow.column(1), Column::Narrow(_)));
        assert_same(&data, &Dataset::from_table(narrow.clone()));
        let narrow_reordered = Dataset::from_table(narrow.into_rows_in_order(&order).unwrap());
        assert_same(&reordered, &narrow_reordered);
        // A code past the declared number of values is named, whatever the width.
        let e = Table::new(vec![0u8, 1, 7], 1, vec![0, 1, 0], Some(&[3]), None, None);
        let message = e.unwrap_err().to_string();
        assert!(
            message.contains("feature 0 has code 7 at row 2"),
            "{message}"
        );
    }

    /// Every column's codes, column after column.
    fn columns_of(data: &Dataset) -> Vec<u32> {
        (0..data.n_features())
            .flat_map(|f| data.column(f).iter())
            .collect()
    }

    fn instance() -> impl Strategy<Value = (usize, usize, Vec<u32>, Vec<u32>, Vec<f64>)> {
        (1usize..90, 1usize..4).prop_flat_map(|(n, d)| {
            (
                Just(n),
                Just(d),
                prop::collection::vec(0u32..4, n * d),
                prop::collection::vec(0u32..3, n),
                prop::collection::vec(0.0f64..5.0, n),
            )
        })
    }

    proptest! {
        #[test]
        fn counts_agree_with_a_naive_scan((n, d, codes, labels, w) in instance(), mask in prop::collection::vec(any::<bool>(), 90)) {
            let ds = Dataset::new(&codes, d, &labels, None, Some(3), Some(w.clone()));
            prop_assume!(ds.is_ok());
            let ds = ds.expect("checked");
            let subset = Bitset::from_indices(n, (0..n).filter(|&r| mask[r]));
            let mut naive = [0.0; 3];
            let mut naive_counts = vec![0u64; 3];
            for r in subset.iter() { naive[labels[r] as usize] += w[r]; naive_counts[labels[r] as usize] += 1; }
            prop_assert_eq!(ds.class_counts(&subset), naive_counts);
            let got = ds.class_weights(&subset);
            for k in 0..3 { prop_assert!((got[k] - naive[k]).abs() < 1e-9); }
            for f in 0..d {
                let split = ds.split_class_weights(&subset, f);
                for (v, child) in split.iter().enumerate() {
                    let rows = subset.and(ds.rows_with(f, v));
                    prop_assert_eq!(rows.iter().all(|r| codes[r * d + f] as usize == v), true);
                    let total: f64 = rows.iter().map(|r| w[r]).sum();
                    prop_assert!((child.iter().sum::<f64>() - total).abs() < 1e-9);
                }
                // The value bitsets of a feature partition the rows.
                let mut union = Bitset::empty(n);
                let mut sum = 0;
                for v in 0..ds.n_values(f) { union.or_assign(ds.rows_with(f, v)); sum += ds.rows_with(f, v).count(); }
                prop_assert_eq!(union, Bitset::full(n));
                prop_assert_eq!(sum, n as u64);
            }
        }
    }
}
