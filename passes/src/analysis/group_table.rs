//! The `symm_mem.group` declarations of a module.

use melior::ir::{
    AttributeLike, BlockLike, OperationRef, RegionLike, attribute::IntegerAttribute,
    operation::OperationLike,
};
use std::collections::BTreeMap;

/// One `symm_mem.group` declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupDecl {
    /// `None` when the size is only known at launch.
    pub world_size: Option<u64>,
}

/// Groups declared at the top level of a module, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupTable {
    groups: BTreeMap<String, GroupDecl>,
}

impl GroupTable {
    /// Reads the declarations in the body of `module`. Only reads the
    /// module's own block, so a function pass may call it.
    pub fn from_module(module: OperationRef) -> Self {
        let mut table = Self::default();
        let Some(block) = module
            .region(0)
            .ok()
            .and_then(|region| region.first_block())
        else {
            return table;
        };
        let mut next = block.first_operation();
        while let Some(op) = next {
            if op.name().as_string_ref().as_str() == Ok("symm_mem.group") {
                let name = op
                    .attribute("sym_name")
                    .ok()
                    .and_then(|attr| symm_dialects::string_value(attr.to_raw()));
                let world_size = op
                    .attribute("world_size")
                    .ok()
                    .and_then(|attr| IntegerAttribute::try_from(attr).ok())
                    .and_then(|attr| u64::try_from(attr.value()).ok());
                if let Some(name) = name {
                    table.insert(name, GroupDecl { world_size });
                }
            }
            next = op.next_in_block();
        }
        table
    }

    pub fn insert(&mut self, name: String, decl: GroupDecl) {
        self.groups.insert(name, decl);
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, GroupDecl)> {
        self.groups
            .iter()
            .map(|(name, decl)| (name.as_str(), *decl))
    }

    pub fn get(&self, name: &str) -> Option<GroupDecl> {
        self.groups.get(name).copied()
    }

    /// `world_size_of` on melior's typed API.
    pub fn world_size_of_op(&self, op: OperationRef) -> Option<u64> {
        use crate::ir::melior_ext::OperationExt;
        let group = op.symbol_or_string("group")?;
        self.get(&group)?.world_size
    }
}
