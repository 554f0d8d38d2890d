//! `symm-mem-verify-groups`: for each function, reports every group it
//! uses (world size, symmetric buffers, operands still waiting for
//! symmetric memory) as remarks, and rejects comm buffers whose group is not
//! declared. Op verifiers check ops' own group references; this pass also
//! covers types that no op verifier sees, such as function arguments.

use crate::{
    GroupTable, PassDescriptor, PassFailed, PassOptions, TypedPass, ir::melior_ext::OperationExt,
    ir::op_kind::OpDialect, ir::text::plural, memref_byte_size,
};
use melior::{
    Context,
    ir::{
        AttributeLike, BlockLike, Location, OperationRef, Type, ValueLike,
        operation::OperationLike, r#type::MemRefType,
    },
};
use std::{collections::BTreeMap, fmt};
use symm_dialects::{
    Allocator, comm_group, emit_error, emit_remark, is_view_like, symmetric_operands,
};

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<VerifyGroups>(
    c"symm-mem-verify-groups",
    c"SymmMemVerifyGroups",
    c"Report each group's world size and symmetric buffers as remarks; reject undeclared groups",
    c"func.func",
    &[],
    file!(),
);

/// What one function does with one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupFacts {
    /// Comm buffers created in the function or passed to it (views of a
    /// buffer are not counted again).
    pub buffers: usize,
    /// Total bytes of the statically shaped ones.
    pub static_bytes: u64,
    /// How many have a dynamic shape.
    pub dynamic_buffers: usize,
    /// Operands that must be symmetric but are not yet (symm-mem-realize
    /// will place them).
    pub pending_operands: usize,
}

/// The groups a function uses, with where each is first seen. `L` is a
/// source location; tests use plain numbers.
#[derive(Clone, Debug)]
pub struct GroupUsage<L> {
    groups: BTreeMap<String, (L, GroupFacts)>,
}

impl<L> Default for GroupUsage<L> {
    fn default() -> Self {
        Self {
            groups: BTreeMap::new(),
        }
    }
}

impl<L: Copy> GroupUsage<L> {
    fn facts(&mut self, group: &str, at: L) -> &mut GroupFacts {
        &mut self
            .groups
            .entry(group.to_owned())
            .or_insert((at, GroupFacts::default()))
            .1
    }

    pub fn add_reference(&mut self, group: &str, at: L) {
        self.facts(group, at);
    }

    /// A comm buffer of `bytes` bytes, or of dynamic size.
    pub fn add_buffer(&mut self, group: &str, bytes: Option<u64>, at: L) {
        let facts = self.facts(group, at);
        facts.buffers += 1;
        match bytes {
            Some(bytes) => facts.static_bytes += bytes,
            None => facts.dynamic_buffers += 1,
        }
    }

    pub fn add_pending(&mut self, group: &str, at: L) {
        self.facts(group, at).pending_operands += 1;
    }

    /// One report per group, in name order; `Err` carries the undeclared
    /// groups with where each was first used.
    pub fn reports(&self, table: &GroupTable) -> Result<Vec<GroupReport>, Vec<(String, L)>> {
        let undeclared: Vec<_> = self
            .groups
            .iter()
            .filter(|(name, _)| table.get(name).is_none())
            .map(|(name, (at, _))| (name.clone(), *at))
            .collect();
        if !undeclared.is_empty() {
            return Err(undeclared);
        }
        Ok(self
            .groups
            .iter()
            .filter_map(|(name, (_, facts))| {
                Some(GroupReport {
                    group: name.clone(),
                    world_size: table.get(name)?.world_size,
                    facts: *facts,
                })
            })
            .collect())
    }
}

/// The remark for one group of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupReport {
    pub group: String,
    pub world_size: Option<u64>,
    pub facts: GroupFacts,
}

impl fmt::Display for GroupReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "group @{}: world size ", self.group)?;
        match self.world_size {
            Some(size) => write!(f, "{size}")?,
            None => f.write_str("set at launch")?,
        }
        let facts = &self.facts;
        write!(
            f,
            ", {} ({} bytes",
            plural(facts.buffers, "symmetric buffer", "symmetric buffers"),
            facts.static_bytes
        )?;
        if facts.dynamic_buffers > 0 {
            write!(f, " + {} of dynamic size", facts.dynamic_buffers)?;
        }
        f.write_str(")")?;
        if facts.pending_operands > 0 {
            write!(
                f,
                ", {} awaiting symmetric memory",
                plural(facts.pending_operands, "operand", "operands")
            )?;
        }
        Ok(())
    }
}

/// The remark for one comm buffer.
fn buffer_remark(what: &str, ty: Type, allocator: &Allocator) -> String {
    let size = MemRefType::try_from(ty)
        .ok()
        .and_then(memref_byte_size)
        .map_or_else(
            || "dynamic size".to_owned(),
            |bytes| format!("{bytes} bytes"),
        );
    format!(
        "symmetric buffer of group @{}: {what} of type {ty}, {size}",
        allocator.group
    )
}

/// Collects the group usage of one function and the per-buffer remarks.
fn analyze<'c>(
    function: OperationRef<'c, '_>,
) -> (GroupUsage<Location<'c>>, Vec<(Location<'c>, String)>) {
    let mut usage = GroupUsage::default();
    let mut remarks = Vec::new();
    let mut record = |ty: Type, what: &str, at: Location<'c>| {
        if let Some(allocator) = Allocator::of_type(ty) {
            let bytes = MemRefType::try_from(ty).ok().and_then(memref_byte_size);
            usage.add_buffer(&allocator.group, bytes, at);
            remarks.push((at, buffer_remark(what, ty, &allocator)));
        }
    };

    if let Some(entry) = function.first_block() {
        for index in 0..entry.argument_count() {
            if let Ok(argument) = entry.argument(index) {
                record(
                    argument.r#type(),
                    &format!("argument #{index}"),
                    argument.location(),
                );
            }
        }
    }

    let mut pending = Vec::new();
    for op in function.descendants() {
        let at = op.location();
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_owned();
        if !is_view_like(op) {
            for result in op.results() {
                record(result.r#type(), &format!("result of {name}"), at);
            }
        }
        if let (Some(indices), Some(group)) = (symmetric_operands(op), comm_group(op)) {
            for index in indices {
                let waiting = op
                    .operand(index)
                    .is_ok_and(|operand| Allocator::of_type(operand.r#type()).is_none());
                pending.push((group.clone(), waiting, at));
            }
        } else if op.dialect() == OpDialect::SymmMem
            && let Some(group) = op
                .attribute("group")
                .ok()
                .and_then(|attr| symm_dialects::symbol_value(attr.to_raw()))
        {
            pending.push((group, false, at));
        }
    }
    for (group, waiting, at) in pending {
        if waiting {
            usage.add_pending(&group, at);
        } else {
            usage.add_reference(&group, at);
        }
    }
    (usage, remarks)
}

/// The pass body.
pub struct VerifyGroups;

impl TypedPass for VerifyGroups {
    fn run_typed<'c>(
        _context: &'c Context,
        function: OperationRef<'c, '_>,
        _options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let table = function
            .parent_operation()
            .map(GroupTable::from_module)
            .unwrap_or_default();
        let (usage, buffer_remarks) = analyze(function);
        match usage.reports(&table) {
            Ok(reports) => {
                let at = function.location();
                for report in reports {
                    emit_remark(at, &report.to_string());
                }
                for (at, remark) in buffer_remarks {
                    emit_remark(at, &remark);
                }
                Ok(())
            }
            Err(undeclared) => {
                for (group, at) in undeclared {
                    emit_error(
                        at,
                        &format!(
                            "group @{group} is used here but not declared; add \
                             `symm_mem.group @{group}` to the module"
                        ),
                    );
                }
                Err(PassFailed)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GroupDecl;

    fn table(groups: &[(&str, Option<u64>)]) -> GroupTable {
        let mut table = GroupTable::default();
        for (name, world_size) in groups {
            table.insert(
                (*name).to_owned(),
                GroupDecl {
                    world_size: *world_size,
                },
            );
        }
        table
    }

    #[test]
    fn counts_buffers_bytes_and_pending_operands_per_group() {
        let mut usage = GroupUsage::default();
        usage.add_buffer("tp", Some(64), 1);
        usage.add_buffer("tp", Some(128), 2);
        usage.add_buffer("tp", None, 3);
        usage.add_pending("tp", 4);
        usage.add_reference("dp", 5);
        let reports = usage
            .reports(&table(&[("tp", Some(8)), ("dp", None)]))
            .expect("both declared");
        assert_eq!(reports.len(), 2);
        assert_eq!(reports[0].group, "dp");
        assert_eq!(
            reports[1].facts,
            GroupFacts {
                buffers: 3,
                static_bytes: 192,
                dynamic_buffers: 1,
                pending_operands: 1
            }
        );
        assert_eq!(
            reports[1].to_string(),
            "group @tp: world size 8, 3 symmetric buffers (192 bytes + 1 of dynamic size), \
             1 operand awaiting symmetric memory"
        );
        assert_eq!(
            reports[0].to_string(),
            "group @dp: world size set at launch, 0 symmetric buffers (0 bytes)"
        );
    }

    #[test]
    fn undeclared_groups_are_reported_at_their_first_use() {
        let mut usage = GroupUsage::default();
        usage.add_reference("tp", 1);
        usage.add_buffer("ghost", Some(4), 7);
        usage.add_buffer("ghost", Some(4), 9);
        let undeclared = usage
            .reports(&table(&[("tp", Some(2))]))
            .expect_err("ghost is undeclared");
        assert_eq!(undeclared, vec![("ghost".to_owned(), 7)]);
    }

    #[test]
    fn a_single_buffer_reads_in_the_singular() {
        let mut usage = GroupUsage::default();
        usage.add_buffer("tp", Some(16), 0);
        let reports = usage.reports(&table(&[("tp", Some(2))])).expect("declared");
        assert_eq!(
            reports[0].to_string(),
            "group @tp: world size 2, 1 symmetric buffer (16 bytes)"
        );
    }
}
