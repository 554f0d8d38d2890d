//! Live intervals of buffers in a function, over a pre-order numbering of
//! its ops. A use nested in a region counts as a use by the ancestor that
//! sits in the buffer's own block, for all of that ancestor's extent: a
//! buffer read inside a loop stays live for the whole loop.

use crate::ir::Op;
use std::collections::HashMap;

pub struct Numbering {
    index: HashMap<Op, usize>,
    subtree_end: HashMap<Op, usize>,
}

impl Numbering {
    pub fn new(function: Op) -> Self {
        let mut numbering = Self {
            index: HashMap::new(),
            subtree_end: HashMap::new(),
        };
        let mut next = 0;
        numbering.visit(function, &mut next);
        numbering
    }

    fn visit(&mut self, op: Op, next: &mut usize) {
        self.index.insert(op, *next);
        *next += 1;
        for region in 0..op.num_regions() {
            for block in op.region_blocks(region) {
                for nested in block.ops() {
                    self.visit(nested, next);
                }
            }
        }
        self.subtree_end.insert(op, *next - 1);
    }

    pub fn index(&self, op: Op) -> usize {
        self.index.get(&op).copied().unwrap_or(0)
    }

    /// The last program point at which a use by `user` keeps a buffer
    /// defined by `def` alive.
    pub fn use_end(&self, def: Op, user: Op) -> usize {
        let anchor = user.ancestor_in(def.block());
        self.subtree_end.get(&anchor).copied().unwrap_or(0)
    }
}
