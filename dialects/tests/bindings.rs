//! The Rust bindings against the real dialect: parsing, the allocator
//! attribute's C API, the symmetric-operand interface and an op built with
//! the generated builders.

use melior::{
    Context,
    ir::{
        Block, BlockLike, Location, Module, OperationRef, RegionLike, Type,
        attribute::FlatSymbolRefAttribute,
        operation::{OperationLike, WalkOrder, WalkResult},
    },
};
use symm_dialects::{
    Allocator, AllocatorKind, comm_group, create_context, is_view_like, symm_mem,
    symmetric_operands,
};

fn context() -> Context {
    create_context()
}

const SOURCE: &str = r#"
symm_mem.group @tp world_size(2)
func.func @f(%x: memref<4xf32, #symm_mem.allocator<symmetric, @tp>>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.subview %x[0] [2] [1] : memref<4xf32, #symm_mem.allocator<symmetric, @tp>> to memref<2xf32, strided<[1]>, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %x into %y group @tp : memref<4xf32, #symm_mem.allocator<symmetric, @tp>>, memref<4xf32>
  return
}
"#;

fn find<'c, 'a>(module: &'a Module<'c>, name: &str) -> Vec<OperationRef<'c, 'a>> {
    let mut raw_ops = Vec::new();
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        if op.name().as_string_ref().as_str() == Ok(name) {
            raw_ops.push(op.to_raw());
        }
        WalkResult::Advance
    });
    raw_ops
        .into_iter()
        // SAFETY: the ops belong to `module`, which outlives the references.
        .map(|raw| unsafe { OperationRef::from_raw(raw) })
        .collect()
}

#[test]
fn allocator_attribute_round_trips_through_the_c_api() {
    let context = context();
    let allocator = Allocator {
        kind: AllocatorKind::Symmetric,
        group: "tp".into(),
    };
    let attribute = allocator.to_attribute(&context).expect("valid allocator");
    assert_eq!(attribute.to_string(), "#symm_mem.allocator<symmetric, @tp>");
    assert_eq!(
        Allocator::from_attribute(attribute),
        Some(allocator.clone())
    );
    assert_eq!(allocator.to_string(), "#symm_mem.allocator<symmetric, @tp>");

    let ty = Type::parse(
        &context,
        "memref<8xbf16, #symm_mem.allocator<symmetric, @tp>>",
    )
    .expect("valid type");
    assert_eq!(Allocator::of_type(ty), Some(allocator));
    let regular = Type::parse(&context, "memref<8xbf16>").expect("valid type");
    assert_eq!(Allocator::of_type(regular), None);
}

#[test]
fn an_empty_group_is_refused() {
    let context = context();
    let allocator = Allocator {
        kind: AllocatorKind::Symmetric,
        group: String::new(),
    };
    assert!(allocator.to_attribute(&context).is_none());
}

#[test]
fn interfaces_are_visible_from_rust() {
    let context = context();
    let module = Module::parse(&context, SOURCE).expect("valid IR");
    assert!(module.as_operation().verify());

    let all_reduce = find(&module, "symm_mem.all_reduce_out");
    assert_eq!(all_reduce.len(), 1);
    assert_eq!(symmetric_operands(all_reduce[0]), Some(vec![0]));
    assert_eq!(comm_group(all_reduce[0]).as_deref(), Some("tp"));

    let subview = find(&module, "memref.subview");
    assert!(is_view_like(subview[0]));
    assert_eq!(symmetric_operands(subview[0]), None);
    assert_eq!(comm_group(subview[0]), None);
}

#[test]
fn generated_builders_create_verified_ops() {
    let context = context();
    let location = Location::unknown(&context);
    let module = Module::parse(&context, "symm_mem.group @tp world_size(2)").expect("valid IR");
    let index = Type::index(&context);
    let group = FlatSymbolRefAttribute::new(&context, "tp");

    let rank = symm_mem::RankOperation::builder(&context, location)
        .rank(index)
        .group(group)
        .build();
    let size = symm_mem::WorldSizeOperation::builder(&context, location)
        .size(index)
        .group(group)
        .build();
    let block = Block::new(&[]);
    block.append_operation(rank.into());
    block.append_operation(size.into());
    let body = module.body();
    let first = body.first_operation().expect("the group op");
    assert_eq!(first.name().as_string_ref().as_str(), Ok("symm_mem.group"));
    let func = melior::dialect::func::func(
        &context,
        melior::ir::attribute::StringAttribute::new(&context, "g"),
        melior::ir::attribute::TypeAttribute::new(
            melior::ir::r#type::FunctionType::new(&context, &[], &[]).into(),
        ),
        {
            let region = melior::ir::Region::new();
            block.append_operation(melior::dialect::func::r#return(&[], location));
            region.append_block(block);
            region
        },
        &[],
        location,
    );
    body.append_operation(func);
    assert!(module.as_operation().verify());
    let text = module.as_operation().to_string();
    assert!(text.contains("symm_mem.rank @tp"), "{text}");
    assert!(text.contains("symm_mem.world_size @tp"), "{text}");
}
