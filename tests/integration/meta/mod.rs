//! Checks on the repository itself rather than on cordon's behaviour: the house's layering and
//! import cycles, and its size rules.

mod layering;
mod source_sizes;
