//! Module-level queries the passes share: functions, symbols, fresh names.

use crate::ir::Op;
use crate::ir::op_kind::OpKind;
use melior::ir::OperationRef;
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

    /// The index of a module on melior's typed API.
    pub fn of(module: OperationRef) -> Self {
        Self::new(module.into())
    }

    pub fn lookup(&self, name: &str) -> Option<Op> {
        self.by_name.get(name).copied()
    }

    /// `lookup` on melior's typed API (the module's ops outlive the pass).
    pub fn lookup_op<'c, 'a>(&self, name: &str) -> Option<OperationRef<'c, 'a>> {
        self.lookup(name).map(super::bridge::operation)
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
    functions_with_bodies(super::bridge::operation(module))
        .into_iter()
        .map(Op::from)
        .collect()
}

/// `defined_functions` on melior's typed API.
pub fn functions_with_bodies<'c, 'a>(module: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    use super::melior_ext::{BlockExt, OperationExt};
    module
        .first_block()
        .map(|block| block.ops())
        .unwrap_or_default()
        .into_iter()
        .filter(|op| op.isa(OpKind::Func) && op.first_block().is_some())
        .collect()
}

/// A symbol name made safe to embed in another symbol name.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
