//! The IR queries the passes build on, on real parsed IR.

use melior::{
    Context,
    ir::{Module, Type, r#type::MemRefType},
};
use symm_dialects::create_context;
use symm_passes::ir::op_kind::OpKind;
use symm_passes::{GroupDecl, GroupTable, memref_byte_size};

fn context() -> Context {
    create_context()
}

fn bytes(context: &Context, ty: &str) -> Option<u64> {
    let ty = Type::parse(context, ty).expect("valid type");
    memref_byte_size(MemRefType::try_from(ty).expect("a memref type"))
}

#[test]
fn byte_sizes_of_memrefs() {
    let context = context();
    assert_eq!(bytes(&context, "memref<4x4xf32>"), Some(64));
    assert_eq!(bytes(&context, "memref<128x256xbf16>"), Some(65536));
    assert_eq!(
        bytes(
            &context,
            "memref<3xf16, #symm_mem.allocator<symmetric, @tp>>"
        ),
        Some(6)
    );
    assert_eq!(bytes(&context, "memref<192xi8>"), Some(192));
    assert_eq!(bytes(&context, "memref<2xindex>"), Some(16));
    assert_eq!(bytes(&context, "memref<3xi1>"), Some(1));
    assert_eq!(bytes(&context, "memref<0xf32>"), Some(0));
    assert_eq!(bytes(&context, "memref<f64>"), Some(8));
    assert_eq!(bytes(&context, "memref<?x4xf32>"), None);
    assert_eq!(bytes(&context, "memref<4xvector<4xf32>>"), None);
}

#[test]
fn group_table_reads_the_module_declarations() {
    let context = context();
    let module = Module::parse(
        &context,
        "symm_mem.group @tp world_size(8)\nsymm_mem.group @dp\nfunc.func private @f()",
    )
    .expect("valid IR");
    let table = GroupTable::from_module(module.as_operation());
    assert_eq!(
        table.get("tp"),
        Some(GroupDecl {
            world_size: Some(8)
        })
    );
    assert_eq!(table.get("dp"), Some(GroupDecl { world_size: None }));
    assert_eq!(table.get("f"), None);
}

#[test]
fn liveness_extends_a_use_in_a_loop_to_the_whole_loop() {
    use melior::ir::{OperationRef, operation::OperationLike};
    use symm_passes::{ir::melior_ext::OperationExt, middle_end::plan::Numbering};

    let context = context();
    let module = Module::parse(
        &context,
        r#"
        func.func @f(%n: index) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %a = memref.alloc() : memref<4xf32>
          %b = memref.alloc() : memref<4xf32>
          scf.for %i = %c0 to %n step %c1 {
            %x = memref.load %a[%c0] : memref<4xf32>
            %inner = memref.alloc() : memref<4xf32>
            memref.store %x, %inner[%c0] : memref<4xf32>
          }
          %one = arith.constant 1.0 : f32
          memref.store %one, %b[%c0] : memref<4xf32>
          return
        }
        "#,
    )
    .expect("valid IR");
    let root = module.as_operation();
    let ops: Vec<OperationRef> = root.descendants();
    let find = |name: &str, nth: usize| {
        ops.iter()
            .filter(|op| op.name().as_string_ref().as_str() == Ok(name))
            .nth(nth)
            .copied()
            .expect("op present")
    };
    let function = find("func.func", 0);
    let numbering = Numbering::new(function);
    let (a, b, inner) = (
        find("memref.alloc", 0),
        find("memref.alloc", 1),
        find("memref.alloc", 2),
    );
    let (load, inner_store, loop_op, outer_store) = (
        find("memref.load", 0),
        find("memref.store", 0),
        find("scf.for", 0),
        find("memref.store", 1),
    );
    let loop_end = numbering.use_end(loop_op, loop_op);
    // %a is read inside the loop: live until the loop ends.
    assert_eq!(numbering.use_end(a, load), loop_end);
    // %inner lives within one iteration only.
    assert_eq!(
        numbering.use_end(inner, inner_store),
        numbering.index(inner_store)
    );
    assert!(numbering.use_end(inner, inner_store) < loop_end);
    // %b is used after the loop.
    assert!(numbering.use_end(b, outer_store) > loop_end);
    assert!(numbering.index(a) < numbering.index(b));
}

#[test]
fn a_walk_erases_ops_holding_regions_through_the_rewriter() {
    use melior::ir::operation::OperationLike;
    use symm_passes::ir::{
        melior_ext::OperationExt,
        rewrite::{Visit, walk_erasing},
    };

    let context = context();
    let module = Module::parse(
        &context,
        r#"
        func.func @f(%c: i1, %a: memref<4xf32>) {
          %c0 = arith.constant 0 : index
          scf.if %c {
            %x = memref.load %a[%c0] : memref<4xf32>
            scf.if %c {
              memref.store %x, %a[%c0] : memref<4xf32>
            }
          }
          %y = memref.load %a[%c0] : memref<4xf32>
          memref.store %y, %a[%c0] : memref<4xf32>
          return
        }
        "#,
    )
    .expect("valid IR");
    let root = module.as_operation();
    // The module and every op it holds.
    let names = || {
        std::iter::once(root)
            .chain(root.descendants())
            .map(|op| op.name_text())
            .collect::<Vec<String>>()
    };
    let before = names().len();
    // Erase the outer scf.if, which holds five ops (with the implicit
    // scf.yields; two in a nested region): a walk that listed its ops
    // first would visit them after they were freed.
    let mut visited = Vec::new();
    walk_erasing(root, |op| {
        visited.push(op.name_text());
        let outer_if = op.name_text() == "scf.if"
            && op.parent_operation().is_some_and(|p| p.isa(OpKind::Func));
        if outer_if { Visit::Erase } else { Visit::Keep }
    });
    // Every op was visited once, each after what it holds, and the walk
    // went on past the erased one.
    assert_eq!(visited.len(), before);
    let position = |name: &str, nth: usize| {
        visited
            .iter()
            .enumerate()
            .filter(|(_, n)| n.as_str() == name)
            .nth(nth)
            .map(|(i, _)| i)
            .expect("visited")
    };
    assert!(position("memref.store", 0) < position("scf.if", 0));
    assert!(position("scf.if", 0) < position("scf.if", 1));
    assert!(position("scf.if", 1) < position("memref.load", 1));
    assert_eq!(visited.last().map(String::as_str), Some("builtin.module"));
    // The outer scf.if and all it held are gone; the rest verifies.
    let after = names();
    assert!(!after.iter().any(|name| name == "scf.if"));
    assert_eq!(after.len(), before - 6);
    assert!(module.as_operation().verify());
}

#[test]
fn a_panic_in_a_visit_stops_the_walk_and_reaches_the_caller() {
    use symm_passes::ir::rewrite::{Visit, walk_erasing};

    let context = context();
    let module = Module::parse(&context, "func.func @f() {\n  return\n}").expect("valid IR");
    let root = module.as_operation();
    let mut visits = 0;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        walk_erasing(root, |_| {
            visits += 1;
            panic!("a visit failed");
            #[allow(unreachable_code)]
            Visit::Keep
        })
    }));
    assert!(caught.is_err());
    assert_eq!(visits, 1, "the walk stops at the first panic");
}

/// MLIR's conversion driver with our legality and rewrite: the illegal ops
/// are handed over, in order, each rewritten (here: a runtime-like call
/// before it) and erased through the driver's rewriter; a refused op stays
/// without a second diagnostic from the driver.
#[test]
fn the_conversion_driver_lowers_what_is_illegal_and_keeps_what_is_refused() {
    use melior::ir::operation::OperationLike;
    use symm_passes::ir::{
        convert::{Rewrite, convert_typed},
        melior_ext::{OperationExt, op_key},
        op_kind::OpKind,
        typed_builder::Inserter,
    };

    let context = context();
    let module = Module::parse(
        &context,
        r#"
        func.func @f(%a: memref<4xf32>, %b: memref<4xf32>, %flag: i1) {
          %c0 = arith.constant 0 : index
          memref.copy %a, %b : memref<4xf32> to memref<4xf32>
          scf.if %flag {
            memref.copy %b, %a : memref<4xf32> to memref<4xf32>
          }
          %d = memref.dim %a, %c0 : memref<4xf32>
          return
        }
        "#,
    )
    .expect("valid IR");
    let root = module.as_operation();
    let copies: Vec<usize> = root
        .descendants()
        .into_iter()
        .filter(|op| op.isa(OpKind::MemrefCopy))
        .map(op_key)
        .collect();
    assert_eq!(copies.len(), 2);
    let (first, nested) = (copies[0], copies[1]);
    let mut handed = Vec::new();
    let lowered = convert_typed(
        root,
        &|op| op.isa(OpKind::MemrefCopy),
        &mut |op, rewriter| {
            handed.push(op_key(op));
            if op_key(op) == nested {
                return Rewrite::Refused;
            }
            // A stand-in for a runtime call: a constant before the op.
            Inserter::before(&context, op)
                .expect("an op in a block")
                .index(42);
            rewriter.erase_op(op);
            Rewrite::Lowered
        },
    );
    assert!(lowered);
    assert_eq!(handed, vec![first, nested]);
    let names: Vec<String> = root.descendants().iter().map(|op| op.name_text()).collect();
    assert_eq!(names.iter().filter(|n| *n == "memref.copy").count(), 1);
    assert_eq!(names.iter().filter(|n| *n == "arith.constant").count(), 2);
    assert!(module.as_operation().verify());
}

/// A rewrite may erase ops the driver has not reached yet: a later illegal
/// op, and an op nested in a region after the one being rewritten (the
/// fused all-reduce erases its consumer and the consumer's terminator).
/// The driver listed them before it started; they leave the IR at once
/// and are destroyed only when the conversion ends, so the driver never
/// reads freed memory (before this, it did: a crash under `--remarks`).
#[test]
fn a_rewrite_may_erase_ops_the_driver_has_yet_to_visit() {
    use melior::ir::operation::OperationLike;
    use symm_passes::ir::{
        convert::{Rewrite, convert_typed},
        melior_ext::OperationExt,
        op_kind::OpKind,
    };

    let context = context();
    let module = Module::parse(
        &context,
        r#"
        func.func @f(%a: memref<4xf32>, %b: memref<4xf32>, %flag: i1) {
          memref.copy %a, %b : memref<4xf32> to memref<4xf32>
          scf.if %flag {
            memref.copy %b, %a : memref<4xf32> to memref<4xf32>
          }
          memref.copy %b, %a : memref<4xf32> to memref<4xf32>
          return
        }
        "#,
    )
    .expect("valid IR");
    let root = module.as_operation();
    let later: Vec<_> = root
        .descendants()
        .into_iter()
        .filter(|op| op.name_text() == "scf.if" || op.isa(OpKind::MemrefCopy))
        .skip(1)
        .collect();
    assert_eq!(later.len(), 3, "the scf.if, its copy, the last copy");
    let mut handed = 0;
    let lowered = convert_typed(
        root,
        &|op| op.isa(OpKind::MemrefCopy),
        &mut |op, rewriter| {
            handed += 1;
            // The first copy takes everything after it with it: the
            // scf.if (with the copy nested in it) and the last copy.
            rewriter.erase_op(later[0]);
            rewriter.erase_op(later[2]);
            rewriter.erase_op(op);
            Rewrite::Lowered
        },
    );
    assert!(lowered);
    assert_eq!(handed, 1, "erased ops are never handed over");
    let names: Vec<String> = root.descendants().iter().map(|op| op.name_text()).collect();
    assert!(!names.iter().any(|n| n == "memref.copy" || n == "scf.if"));
    assert!(module.as_operation().verify());
}

#[test]
fn a_panic_in_a_conversion_reaches_the_caller() {
    use melior::ir::operation::OperationLike;
    use symm_passes::ir::{
        convert::{Rewrite, convert_typed},
        melior_ext::OperationExt,
        op_kind::OpKind,
    };

    let context = context();
    let module = Module::parse(&context, "func.func @f() {\n  return\n}").expect("valid IR");
    let root = module.as_operation();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        convert_typed(root, &|op| op.isa(OpKind::Return), &mut |_, _| {
            panic!("a rewrite failed");
            #[allow(unreachable_code)]
            Rewrite::Refused
        })
    }));
    assert!(caught.is_err());
    assert!(module.as_operation().verify());
}
