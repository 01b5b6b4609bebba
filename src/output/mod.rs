//! Renderers: check reports as human text and JSON ([`render`]) or CI annotations ([`gate`]),
//! Hasse diagrams ([`dot`]), documentation pages ([`pages`]) and Rust promotion modules
//! ([`codegen`]). Each takes values and returns text; none reads or writes files.

pub mod cast;
pub mod codegen;
pub mod diff;
pub mod dot;
pub mod gate;
pub mod pages;
pub mod render;
pub mod repair;
pub mod result_type;
pub mod safety;
pub mod suggest;
pub mod synthesis;
pub mod table;
