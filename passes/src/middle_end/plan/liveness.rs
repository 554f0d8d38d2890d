//! Live intervals of buffers in a function, over a pre-order numbering of
//! its ops. A use nested in a region counts as a use by the ancestor that
//! sits in the buffer's own block, for all of that ancestor's extent: a
//! buffer read inside a loop stays live for the whole loop.

use crate::ir::melior_ext::{BlockExt, OperationExt, op_key};
use melior::ir::{BlockLike, OperationRef, RegionLike, operation::OperationLike};
use std::collections::HashMap;

/// Each op's place in a pre-order walk and the last place of its subtree,
/// keyed by `op_key` (the numbering reads the IR once; the plan rewrites
/// it only after every interval is known).
pub struct Numbering {
    index: HashMap<usize, usize>,
    subtree_end: HashMap<usize, usize>,
}

impl Numbering {
    pub fn new(function: OperationRef) -> Self {
        let mut numbering = Self {
            index: HashMap::new(),
            subtree_end: HashMap::new(),
        };
        let mut next = 0;
        numbering.visit(function, &mut next);
        numbering
    }

    fn visit(&mut self, op: OperationRef, next: &mut usize) {
        self.index.insert(op_key(op), *next);
        *next += 1;
        for region in op.regions() {
            let mut block = region.first_block();
            while let Some(current) = block {
                for nested in current.ops() {
                    self.visit(nested, next);
                }
                block = current.next_in_region();
            }
        }
        self.subtree_end.insert(op_key(op), *next - 1);
    }

    pub fn index(&self, op: OperationRef) -> usize {
        self.index.get(&op_key(op)).copied().unwrap_or(0)
    }

    /// The last program point at which a use by `user` keeps a buffer
    /// defined by `def` alive.
    pub fn use_end(&self, def: OperationRef, user: OperationRef) -> usize {
        let anchor = match def.block() {
            Some(block) => user.ancestor_in(block),
            None => user,
        };
        self.subtree_end.get(&op_key(anchor)).copied().unwrap_or(0)
    }
}
