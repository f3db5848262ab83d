//! Sorted-label factorisation of integer columns by counting, for the input encoder: most
//! categorical data are small integer codes, and counting them is one linear pass where sorting
//! is not.

/// Codes and labels of integer columns: `codes[r * n_cols + j]` is the rank of cell (r, j) among
/// the distinct values of column j (in increasing order), and `labels[j]` lists those values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Factorized {
    /// Row-major codes, one per cell.
    pub codes: Vec<u32>,
    /// Distinct values of each column, increasing.
    pub labels: Vec<Vec<i64>>,
}

/// Factorises the row-major `cells` (`n_cols` per row) column by column; None when `cells` is
/// empty or some column's range (max − min + 1) exceeds `max_span`, where counting would cost
/// more than sorting (spans above 2^32 are always refused).
pub fn factorize_columns(cells: &[i64], n_cols: usize, max_span: u64) -> Option<Factorized> {
    let max_span = max_span.min(1 << 32);
    if n_cols == 0 || cells.is_empty() || cells.len() % n_cols != 0 {
        return None;
    }
    let mut low = cells[..n_cols].to_vec();
    let mut high = low.clone();
    for row in cells.chunks_exact(n_cols) {
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
    // rank[j][v - low[j]]: code of value v in column j, once the present values are known.
    let mut rank: Vec<Vec<u32>> = spans.iter().map(|&s| vec![0; s]).collect();
    for row in cells.chunks_exact(n_cols) {
        for (j, &c) in row.iter().enumerate() {
            rank[j][(c - low[j]) as usize] = 1;
        }
    }
    let mut labels = Vec::with_capacity(n_cols);
    for (j, slots) in rank.iter_mut().enumerate() {
        let mut present = Vec::new();
        for (offset, slot) in slots.iter_mut().enumerate() {
            if *slot != 0 {
                *slot = present.len() as u32;
                present.push(low[j] + offset as i64);
            }
        }
        labels.push(present);
    }
    let mut codes = Vec::with_capacity(cells.len());
    for row in cells.chunks_exact(n_cols) {
        codes.extend((row.iter().enumerate()).map(|(j, &c)| rank[j][(c - low[j]) as usize]));
    }
    Some(Factorized { codes, labels })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_each_column_by_its_sorted_distinct_values() {
        let cells = [7, -3, 2, 5, 7, -3, 9, 0];
        let f = factorize_columns(&cells, 2, 100).unwrap();
        assert_eq!(f.labels, vec![vec![2, 7, 9], vec![-3, 0, 5]]);
        assert_eq!(f.codes, vec![1, 0, 0, 2, 1, 0, 2, 1]);
    }

    #[test]
    fn refuses_wide_ranges_and_empty_input() {
        assert_eq!(factorize_columns(&[0, 1_000_000], 1, 4096), None);
        assert_eq!(factorize_columns(&[i64::MIN, i64::MAX], 1, u64::MAX), None);
        assert_eq!(factorize_columns(&[], 3, 10), None);
    }
}
