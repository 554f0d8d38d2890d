//! The C header of a compiled program: one declaration per public
//! function and its asynchronous form; memrefs are pointers to their first
//! element, and a dynamic leading size is the `tokens` parameter. Nothing
//! from the input is printed with melior's `Display` (which aborts on bytes
//! that are not UTF-8).

use crate::c_names;
use melior::ir::{
    AttributeLike, BlockLike, Module, RegionLike, Type, TypeLike, ValueLike,
    attribute::TypeAttribute,
    operation::OperationLike,
    r#type::{DimSize, FunctionType, IntegerType, MemRefType, ShapedTypeLike},
};
use std::collections::BTreeSet;
use symm_passes::to_runtime::{ASYNC_ENTRY_ATTR, ASYNC_SUFFIX, RUNTIME_HANDLE_ATTR};

/// A function's name, its parameters and its result, as the header
/// declares them.
pub struct Entry {
    name: String,
    params: Vec<Param>,
    /// The result's C type.
    result: Option<String>,
    /// It takes memrefs of dynamic leading size, so the token count too.
    dynamic: bool,
    /// The largest token count (`symm_mem.max_tokens`), when it says.
    max_tokens: Option<i64>,
}

/// One parameter: its C type, its MLIR type (for the comment), whether it
/// is host memory, and for a memref its element type, shape (-1: the
/// dynamic leading size) and whether the function may write it.
struct Param {
    c: String,
    mlir: String,
    host: bool,
    memref: Option<Buffer>,
}

/// A memref parameter, as the signature file describes it.
struct Buffer {
    element: String,
    shape: Vec<i64>,
    written: bool,
}

/// The element type and shape of a memref type (`None` for a scalar).
fn buffer_of(ty: Type) -> Option<(String, Vec<i64>)> {
    let memref = MemRefType::try_from(ty).ok()?;
    let shape = (0..memref.rank())
        .map(|dim| match memref.dim_size(dim) {
            Ok(DimSize::Static(size)) => i64::try_from(size).unwrap_or(-1),
            _ => -1,
        })
        .collect();
    Some((symm_dialects::type_text(memref.element().to_raw()), shape))
}

/// The C spelling of an MLIR type at the entry-point ABI, read from the
/// type itself; the error says why it has none.
fn c_type(ty: Type) -> Result<String, String> {
    if let Ok(memref) = MemRefType::try_from(ty) {
        return memref_c_type(memref);
    }
    if ty.is_bf16() || ty.is_f16() {
        return Err(format!(
            "{}: a 16-bit float scalar travels in a floating-point register, which no C type \
             before C23 names (uint16_t would travel in an integer one): pass it as f32, or \
             in a memref",
            symm_dialects::type_text(ty.to_raw())
        ));
    }
    scalar(ty).map(str::to_owned).ok_or_else(|| {
        format!(
            "{}: no C type at the entry-point ABI",
            symm_dialects::type_text(ty.to_raw())
        )
    })
}

/// A scalar's C type: also a memref element's (bf16 and f16 elements as
/// uint16_t: their bits).
fn scalar(ty: Type) -> Option<&'static str> {
    if ty.is_f32() {
        return Some("float");
    }
    if ty.is_f64() {
        return Some("double");
    }
    if ty.is_index() {
        return Some("int64_t");
    }
    let integer = IntegerType::try_from(ty).ok()?;
    let unsigned = integer.is_unsigned();
    Some(match (integer.width(), unsigned) {
        (1, _) => "bool",
        (8, false) => "int8_t",
        (8, true) => "uint8_t",
        (16, false) => "int16_t",
        (16, true) => "uint16_t",
        (32, false) => "int32_t",
        (32, true) => "uint32_t",
        (64, false) => "int64_t",
        (64, true) => "uint64_t",
        _ => return None,
    })
}

/// A memref is a pointer to its first element: contiguous, in device
/// memory (or the application's pinned host memory), static but for a
/// leading size (the call's token count).
fn memref_c_type(memref: MemRefType) -> Result<String, String> {
    let text = symm_dialects::type_text(memref.to_raw());
    if !memref.affine_map().is_identity() {
        return Err(format!(
            "{text}: entry points take memrefs with the default (contiguous) layout"
        ));
    }
    if let Some(space) = memref.memory_space()
        && !symm_dialects::is_host_memory(space)
    {
        return Err(format!(
            "{text}: entry points take memrefs in the default memory space (device memory \
             the application owns), not {}",
            symm_dialects::attribute_text(space.to_raw())
        ));
    }
    let dynamic_past_leading = (1..memref.rank()).any(|dim| {
        memref
            .dim_size(dim)
            .ok()
            .is_none_or(|size| matches!(size, DimSize::Dynamic))
    });
    if dynamic_past_leading {
        return Err(format!(
            "{text}: only the leading size of an entry point's memref may be dynamic"
        ));
    }
    let element = memref.element();
    let c = if element.is_bf16() || element.is_f16() {
        Some("uint16_t")
    } else {
        scalar(element)
    };
    c.map(|c| format!("{c} *")).ok_or_else(|| {
        format!(
            "{text}: its elements ({}) have no C type at the entry-point ABI",
            symm_dialects::type_text(element.to_raw())
        )
    })
}

/// Whether a memref lives in host memory (the header says so).
fn in_host_memory(ty: Type) -> bool {
    MemRefType::try_from(ty)
        .ok()
        .and_then(|memref| memref.memory_space())
        .is_some_and(symm_dialects::is_host_memory)
}

/// Whether a memref's leading size is dynamic (the call's token count).
fn dynamic_leading(ty: Type) -> bool {
    MemRefType::try_from(ty).is_ok_and(|memref| {
        memref.rank() > 0
            && memref
                .dim_size(0)
                .is_ok_and(|size| matches!(size, DimSize::Dynamic))
    })
}

/// How the lowered module exposes the entry points.
#[derive(Default)]
pub struct Lowered {
    /// Functions that take the runtime handle first
    /// (convert-symm-mem-to-runtime marks them `RUNTIME_HANDLE_ATTR`).
    pub with_runtime: BTreeSet<String>,
    /// Functions that also have an asynchronous entry point, `NAME_async`
    /// (marked `ASYNC_ENTRY_ATTR`), by their own name.
    pub asynchronous: BTreeSet<String>,
}

pub fn lowered_entries(module: &Module) -> Lowered {
    let mut lowered = Lowered::default();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        let Ok(name) = op.attribute("sym_name") else {
            continue;
        };
        let Some(name) = symm_dialects::string_value(name.to_raw()) else {
            continue;
        };
        if op.attribute(ASYNC_ENTRY_ATTR).is_ok() {
            if let Some(base) = name.strip_suffix(ASYNC_SUFFIX) {
                lowered.asynchronous.insert(base.to_owned());
            }
        } else if op.attribute(RUNTIME_HANDLE_ATTR).is_ok() {
            lowered.with_runtime.insert(name);
        }
    }
    lowered
}

/// Public functions with a body, read before lowering. Errors are located
/// at the function (`file:line:col: error: ...`).
pub fn entry_points(module: &Module) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        if op.name().as_string_ref().as_str() != Ok("func.func") {
            continue;
        }
        let private = op
            .attribute("sym_visibility")
            .is_ok_and(|v| symm_dialects::attribute_text(v.to_raw()).contains("private"));
        let has_body = op.region(0).ok().and_then(|r| r.first_block()).is_some();
        if private || !has_body {
            continue;
        }
        let location =
            crate::location::plain(&symm_dialects::location_text(op.location().to_raw()));
        let located = |what: String| format!("{location}: error: {what}");
        let name = op
            .attribute("sym_name")
            .ok()
            .and_then(|a| symm_dialects::string_value(a.to_raw()))
            .ok_or_else(|| located("a function without a name".into()))?;
        if let Some(problem) = c_names::problem(&name) {
            return Err(located(format!("entry point: {problem}")));
        }
        let signature = op
            .attribute("function_type")
            .ok()
            .and_then(|a| TypeAttribute::try_from(a).ok())
            .and_then(|a| FunctionType::try_from(a.value()).ok())
            .ok_or_else(|| located(format!("@{name}: a function without a function type")))?;
        let mut params = Vec::new();
        let mut dynamic = false;
        let body = op.region(0).ok().and_then(|r| r.first_block());
        for index in 0..signature.input_count() {
            let ty = signature.input(index).map_err(|e| located(e.to_string()))?;
            dynamic |= dynamic_leading(ty);
            let c =
                c_type(ty).map_err(|e| located(format!("@{name}: argument #{index} is {e}")))?;
            let written = body
                .and_then(|b| b.argument(index).ok())
                // SAFETY: a live block argument.
                .is_some_and(|arg| unsafe {
                    symm_dialects::ffi::symmValueMayBeWritten(arg.to_raw())
                });
            params.push(Param {
                c,
                mlir: symm_dialects::type_text(ty.to_raw()),
                host: in_host_memory(ty),
                memref: buffer_of(ty).map(|(element, shape)| Buffer {
                    element,
                    shape,
                    written,
                }),
            });
        }
        let result = match signature.result_count() {
            0 => None,
            1 => {
                let ty = signature.result(0).map_err(|e| located(e.to_string()))?;
                Some(c_type(ty).map_err(|e| located(format!("@{name}: its result is {e}")))?)
            }
            _ => {
                return Err(located(format!(
                    "@{name}: entry points return at most one value (C functions return one)"
                )));
            }
        };
        let max_tokens = op
            .attribute("symm_mem.max_tokens")
            .ok()
            .and_then(|a| melior::ir::attribute::IntegerAttribute::try_from(a).ok())
            .map(|a| a.value());
        entries.push((
            location,
            Entry {
                name,
                params,
                result,
                dynamic,
                max_tokens,
            },
        ));
    }
    check_async_names(&entries)?;
    Ok(entries.into_iter().map(|(_, entry)| entry).collect())
}

/// `NAME_async` is the name of NAME's asynchronous entry point: a public
/// function may not take it.
fn check_async_names(entries: &[(String, Entry)]) -> Result<(), String> {
    let names: BTreeSet<&str> = entries.iter().map(|(_, e)| e.name.as_str()).collect();
    for (location, entry) in entries {
        if let Some(base) = entry.name.strip_suffix(ASYNC_SUFFIX)
            && names.contains(base)
        {
            return Err(format!(
                "{location}: error: entry point: its name '{}' is the name of the asynchronous \
                 form of the entry point @{base} ({base}{ASYNC_SUFFIX}(runtime, stream, ...)): \
                 rename one of them",
                entry.name
            ));
        }
    }
    Ok(())
}

/// Whether `entry` has an asynchronous form, and the parameters before its
/// own: the runtime handle (when it takes one) and the token count (when
/// it takes memrefs of dynamic leading size), spelled `runtime` and
/// `tokens` in the caller's language.
fn leading_params(
    entry: &Entry,
    lowered: &Lowered,
    runtime: &str,
    tokens: &str,
) -> (bool, Vec<String>) {
    let asynchronous = lowered.asynchronous.contains(&entry.name);
    let mut params = Vec::new();
    if asynchronous || lowered.with_runtime.contains(&entry.name) {
        params.push(runtime.to_owned());
    }
    if entry.dynamic {
        params.push(tokens.to_owned());
    }
    (asynchronous, params)
}

/// The header text; the functions named in `lowered.with_runtime` take the
/// runtime handle first, and those in `lowered.asynchronous` get their
/// asynchronous entry point declared too.
pub fn render(input: &str, entries: &[Entry], lowered: &Lowered) -> String {
    let guard: String = std::path::Path::new(input)
        .file_stem()
        .map(|s| s.to_string_lossy().to_uppercase())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    // The path goes into a comment: nothing in it may end the comment.
    let input = input.replace("*/", "* /");
    let mut out = format!(
        "/* Generated by symm-compile from {input}. Entry points of the compiled\n \
         * object; memrefs are pointers to device memory (bf16/f16 as uint16_t),\n \
         * or to pinned host memory where the type says #cudagraph.host.\n \
         * Link with libsymm_runtime; run one process per GPU (symm-launch).\n \
         *\n \
         * NAME(runtime, ...) runs on the runtime's stream and waits for the\n \
         * result; any failure (a kernel that does not load or launch, a dead\n \
         * peer) prints a message and ends the process with status 1.\n \
         * NAME_async(runtime, stream, ...) enqueues on `stream` (a CUstream;\n \
         * NULL: the runtime's; CU_STREAM_LEGACY: the legacy default stream,\n \
         * the call's CUDA graphs captured on the runtime's stream and\n \
         * replayed on the legacy one) and returns at once: 0, or -1 when\n \
         * the call failed (symm_last_error() says why; nothing after the\n \
         * failure ran).\n \
         * Failures that surface later (a peer that never signals) are\n \
         * reported by symm_status() or symm_stream_synchronize(); after a\n \
         * failure, calls fail until one of them has reported it. */\n\
         #ifndef SYMM_COMPILED_{guard}_H\n#define SYMM_COMPILED_{guard}_H\n\n\
         #include <stdbool.h>\n#include <stdint.h>\n\n#include \"symm_runtime.h\"\n\n\
         #ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n"
    );
    for entry in entries {
        let (asynchronous, mut params) = leading_params(
            entry,
            lowered,
            "symm_runtime *runtime",
            "int64_t tokens /* the leading size of the ?x memrefs */",
        );
        for (index, param) in entry.params.iter().enumerate() {
            let host = if param.host {
                ": host memory, pinned (cudaHostAlloc, symm_host_alloc)"
            } else {
                ""
            };
            // A pointer's `*` binds to the name; a scalar needs a space.
            let separator = if param.c.ends_with('*') { "" } else { " " };
            params.push(format!(
                "{}{separator}arg{index} /* {}{host} */",
                param.c,
                param.mlir.replace("*/", "* /")
            ));
        }
        if params.is_empty() {
            params.push("void".into());
        }
        let result = entry
            .result
            .as_ref()
            .map_or("void".to_owned(), |c| c.trim_end().to_owned());
        out.push_str(&format!(
            "{result} {}(\n    {});\n\n",
            entry.name,
            params.join(",\n    ")
        ));
        if asynchronous {
            params.insert(1, "void *stream".into());
            out.push_str(&format!(
                "int32_t {}{ASYNC_SUFFIX}(\n    {});\n\n",
                entry.name,
                params.join(",\n    ")
            ));
        }
    }
    out.push_str(&format!(
        "#ifdef __cplusplus\n}}\n#endif\n\n#endif /* SYMM_COMPILED_{guard}_H */\n"
    ));
    out
}

/// The Rust type of a C type the header declares: pointers become `*mut`
/// of the element, `symm_runtime *` and `void *` raw `c_void` pointers.
fn rust_type(c: &str) -> String {
    let c = c.trim();
    if let Some(pointee) = c.strip_suffix('*') {
        let pointee = pointee.trim();
        let element = match pointee {
            "void" | "symm_runtime" => "::core::ffi::c_void",
            other => rust_scalar(other),
        };
        return format!("*mut {element}");
    }
    rust_scalar(c).to_owned()
}

fn rust_scalar(c: &str) -> &'static str {
    match c {
        "float" => "f32",
        "double" => "f64",
        "bool" => "bool",
        "int8_t" => "i8",
        "uint8_t" => "u8",
        "int16_t" => "i16",
        "uint16_t" => "u16",
        "int32_t" => "i32",
        "uint32_t" => "u32",
        "int64_t" => "i64",
        "uint64_t" => "u64",
        other => panic!("internal: the header declared a C type '{other}' with no Rust twin"),
    }
}

/// How Rust declares the C function `name`: Rust keywords as raw
/// identifiers, and the four that cannot be raw renamed with `link_name`.
fn rust_function(name: &str) -> String {
    const RAW: &[&str] = &[
        "abstract", "as", "async", "await", "become", "box", "const", "continue", "do", "dyn",
        "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
        "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
        "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
        "virtual", "where", "while", "yield", "break",
    ];
    if matches!(name, "self" | "Self" | "super" | "crate") {
        format!("#[link_name = \"{name}\"]\n    pub fn {name}_")
    } else if RAW.contains(&name) {
        format!("pub fn r#{name}")
    } else {
        format!("pub fn {name}")
    }
}

/// The Rust bindings of the same entry points as `render`'s header: an
/// `extern "C"` block to `include!` into a module, which also links the
/// runtime the compiled object calls (`use symm_runtime as _`).
pub fn render_rust(input: &str, entries: &[Entry], lowered: &Lowered) -> String {
    let input = input.replace('\n', " ");
    let mut out = format!(
        "// Generated by symm-compile from {input}: the entry points of the compiled\n\
         // object, for Rust (the declarations of its C header). Include it in a\n\
         // module: `mod layer {{ include!(concat!(env!(\"OUT_DIR\"), \"/NAME.rs\")); }}`.\n\
         // Memrefs are pointers to device memory (bf16/f16 as u16), `runtime` is\n\
         // the symm_runtime::session::Session the call runs in, `stream` a CUstream\n\
         // (null: the runtime's; CU_STREAM_LEGACY, 0x1: the legacy default\n\
         // stream). NAME waits for its result and ends the process\n\
         // on a failure; NAME_async enqueues and returns 0, or -1 with the reason\n\
         // in symm_runtime's last error (symm_last_error).\n\n\
         // The compiled object calls the runtime: this links it, even in a crate\n\
         // that uses nothing else of symm_runtime.\n\
         #[allow(unused_imports)]\nuse symm_runtime as _;\n\n\
         #[allow(dead_code, clippy::too_many_arguments)]\nunsafe extern \"C\" {{\n"
    );
    for entry in entries {
        let (asynchronous, mut params) = leading_params(
            entry,
            lowered,
            "runtime: *mut ::core::ffi::c_void",
            "tokens: i64 /* the leading size of the ?x memrefs */",
        );
        for (index, param) in entry.params.iter().enumerate() {
            let host = if param.host {
                ", pinned host memory"
            } else {
                ""
            };
            params.push(format!(
                "arg{index}: {} /* {}{host} */",
                rust_type(&param.c),
                param.mlir.replace("*/", "* /")
            ));
        }
        let result = entry
            .result
            .as_ref()
            .map_or(String::new(), |c| format!(" -> {}", rust_type(c)));
        out.push_str(&format!(
            "    {}(\n        {},\n    ){result};\n",
            rust_function(&entry.name),
            params.join(",\n        ")
        ));
        if asynchronous {
            params.insert(1, "stream: *mut ::core::ffi::c_void".into());
            out.push_str(&format!(
                "    {}(\n        {},\n    ) -> i32;\n",
                rust_function(&format!("{}{ASYNC_SUFFIX}", entry.name)),
                params.join(",\n        ")
            ));
        }
    }
    out.push_str("}\n");
    out
}

/// `text` as a JSON string.
fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The signature file (`--emit=signature`, OUTPUT.json): the same entry
/// points as the header, for tools that call them without a C compiler
/// (the Python package checks arguments and gives torch the shapes of its
/// custom ops from it). Each argument is a buffer (its element type, its
/// shape with -1 for the dynamic leading size, whether the function may
/// write it, whether it is host memory) or a scalar (its C type).
pub fn render_signature(input: &str, entries: &[Entry], lowered: &Lowered) -> String {
    let mut functions = Vec::new();
    for entry in entries {
        let args: Vec<String> = entry
            .params
            .iter()
            .enumerate()
            .map(|(index, param)| match &param.memref {
                Some(buffer) => format!(
                    "{{\"name\": \"arg{index}\", \"kind\": \"buffer\", \"element\": {}, \
                     \"shape\": [{}], \"written\": {}, \"host\": {}, \"mlir\": {}}}",
                    json_string(&buffer.element),
                    buffer
                        .shape
                        .iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    buffer.written,
                    param.host,
                    json_string(&param.mlir)
                ),
                None => format!(
                    "{{\"name\": \"arg{index}\", \"kind\": \"scalar\", \"c\": {}, \"mlir\": {}}}",
                    json_string(param.c.trim()),
                    json_string(&param.mlir)
                ),
            })
            .collect();
        functions.push(format!(
            "    {{\"name\": {}, \"runtime\": {}, \"async\": {}, \"tokens\": {}, \
             \"max_tokens\": {}, \"result\": {},\n     \"args\": [\n      {}]}}",
            json_string(&entry.name),
            lowered.with_runtime.contains(&entry.name)
                || lowered.asynchronous.contains(&entry.name),
            lowered.asynchronous.contains(&entry.name),
            entry.dynamic,
            entry
                .max_tokens
                .map_or("null".to_owned(), |m| m.to_string()),
            entry
                .result
                .as_ref()
                .map_or("null".to_owned(), |c| json_string(c.trim())),
            args.join(",\n      ")
        ));
    }
    format!(
        "{{\"generator\": \"symm-compile\", \"version\": {}, \"source\": {},\n \"entry_points\": [\n{}\n ]}}\n",
        json_string(env!("CARGO_PKG_VERSION")),
        json_string(input),
        functions.join(",\n")
    )
}

#[cfg(test)]
mod tests {
    use super::c_type;
    use melior::ir::Type;

    /// The C type of the MLIR type written `text`.
    fn c(text: &str) -> Result<String, String> {
        let context = symm_dialects::create_context();
        let ty = Type::parse(&context, text).unwrap_or_else(|| panic!("{text} parses"));
        c_type(ty)
    }

    #[test]
    fn maps_memrefs_to_pointers_and_scalars_to_values() {
        assert_eq!(c("memref<8x64xf32>").unwrap(), "float *");
        assert_eq!(c("memref<16xbf16>").unwrap(), "uint16_t *");
        assert_eq!(c("memref<?x64xf32>").unwrap(), "float *");
        assert_eq!(c("memref<?x8xf32, #cudagraph.host>").unwrap(), "float *");
        assert_eq!(c("i64").unwrap(), "int64_t");
        assert_eq!(c("index").unwrap(), "int64_t");
        assert_eq!(c("f32").unwrap(), "float");
        assert_eq!(c("f64").unwrap(), "double");
        assert_eq!(c("i1").unwrap(), "bool");
        assert_eq!(c("ui32").unwrap(), "uint32_t");
        assert_eq!(c("si8").unwrap(), "int8_t");
    }

    #[test]
    fn every_c_type_has_a_rust_twin() {
        use super::rust_type;
        assert_eq!(rust_type("float *"), "*mut f32");
        assert_eq!(rust_type("uint16_t *"), "*mut u16");
        assert_eq!(rust_type("symm_runtime *"), "*mut ::core::ffi::c_void");
        assert_eq!(rust_type("int64_t"), "i64");
        assert_eq!(rust_type("bool"), "bool");
        for text in [
            "memref<4xf64>",
            "memref<4xi8>",
            "memref<4xui32>",
            "i1",
            "si16",
            "f64",
        ] {
            rust_type(&c(text).unwrap());
        }
    }

    #[test]
    fn refuses_what_c_cannot_declare() {
        assert!(
            c("memref<64x?xf32>")
                .unwrap_err()
                .contains("only the leading size")
        );
        assert!(
            c("memref<8xf32, strided<[2]>>")
                .unwrap_err()
                .contains("default (contiguous) layout")
        );
        assert!(
            c("memref<8xf32, 1>")
                .unwrap_err()
                .contains("default memory space")
        );
        assert!(c("memref<8xi7>").unwrap_err().contains("no C type"));
        assert!(c("i7").unwrap_err().contains("no C type"));
        assert!(c("tensor<8xf32>").unwrap_err().contains("no C type"));
        assert!(c("bf16").unwrap_err().contains("floating-point register"));
        assert!(c("f16").unwrap_err().contains("floating-point register"));
    }
}
