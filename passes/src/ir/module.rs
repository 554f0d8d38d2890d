//! Module-level queries the passes share: functions, symbols, fresh names.

use super::melior_ext::{BlockExt, OperationExt};
use crate::ir::op_kind::OpKind;
use melior::ir::OperationRef;
use mlir_sys::MlirOperation;
use std::collections::{HashMap, HashSet};

/// The top-level ops of a module by symbol name, and fresh-name generation.
/// It outlives no pass run (each run builds its own), and the module's
/// top-level ops outlive the run.
pub struct SymbolIndex {
    by_name: HashMap<String, MlirOperation>,
    taken: HashSet<String>,
}

impl SymbolIndex {
    /// The index of `module`'s top-level symbols.
    pub fn of(module: OperationRef) -> Self {
        let mut by_name = HashMap::new();
        for op in module.first_block().map(|b| b.ops()).unwrap_or_default() {
            if let Some(name) = op.symbol_or_string("sym_name") {
                by_name.insert(name, op.to_raw());
            }
        }
        let taken = by_name.keys().cloned().collect();
        Self { by_name, taken }
    }

    /// Whether the module defines `name`.
    pub fn defines(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The top-level op named `name`.
    pub fn lookup_op<'c, 'a>(&self, name: &str) -> Option<OperationRef<'c, 'a>> {
        // SAFETY: an op of the module the pass runs on (`of`), which
        // outlives the run and so this index.
        self.by_name
            .get(name)
            .map(|raw| unsafe { super::melior_ext::operation_at(*raw) })
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
pub fn functions_with_bodies<'c, 'a>(module: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
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
