//! The data layer: fixed-length row bitsets and the compact categorical dataset built from them.

pub mod bitset;
pub mod counter;
pub mod dataset;
pub mod factorize;
pub mod popcount;

pub use bitset::Bitset;
pub use counter::SubsetCounter;
pub use dataset::{
    codes_of_columns, column_major_codes, transpose_bytes, Codes, Column, Dataset, Table,
};
pub use factorize::{codes_under_labels, plan_factorization, Code, Plan};
