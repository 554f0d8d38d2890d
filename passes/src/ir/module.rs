//! Module-level queries the passes share: functions, symbols, fresh names.

use crate::ir::Op;
use crate::ir::op_kind::OpKind;
use std::collections::{HashMap, HashSet};

/// The top-level ops of a module by symbol name, and fresh-name generation.
pub struct SymbolIndex {
    by_name: HashMap<String, Op>,
    taken: HashSet<String>,
}

impl SymbolIndex {
    pub fn new(module: Op) -> Self {
        let mut by_name = HashMap::new();
        for op in module.entry_block().map(|b| b.ops()).unwrap_or_default() {
            if let Some(name) = op.symbol_name() {
                by_name.insert(name, op);
            }
        }
        let taken = by_name.keys().cloned().collect();
        Self { by_name, taken }
    }

    pub fn lookup(&self, name: &str) -> Option<Op> {
        self.by_name.get(name).copied()
    }

    /// `base`, or `base_N` for the first N that is free; reserves it.
    pub fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_owned();
        let mut n = 0;
        while self.taken.contains(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.taken.insert(name.clone());
        name
    }
}

/// The functions of a module that have a body.
pub fn defined_functions(module: Op) -> Vec<Op> {
    module
        .entry_block()
        .map(|block| block.ops())
        .unwrap_or_default()
        .into_iter()
        .filter(|op| op.isa(OpKind::Func) && op.entry_block().is_some())
        .collect()
}

/// A symbol name made safe to embed in another symbol name.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
