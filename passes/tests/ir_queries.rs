//! The IR queries the passes build on, on real parsed IR.

use melior::{
    Context,
    ir::{Module, Type, r#type::MemRefType},
};
use symm_dialects::create_context;
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
