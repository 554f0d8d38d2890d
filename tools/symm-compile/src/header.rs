//! The C header of a compiled program: one declaration per public
//! function and its asynchronous form; memrefs are pointers to their first
//! element, and a dynamic leading size is the `tokens` parameter. Nothing
//! from the input is printed with melior's `Display` (which aborts on bytes
//! that are not UTF-8).

use melior::ir::{
    AttributeLike, BlockLike, Module, RegionLike, TypeLike, ValueLike, operation::OperationLike,
};
use std::collections::BTreeSet;
use symm_passes::to_runtime::{ASYNC_ENTRY_ATTR, ASYNC_SUFFIX, RUNTIME_HANDLE_ATTR};

/// A function's name and its (C type, MLIR type) parameters and result.
pub struct Entry {
    name: String,
    params: Vec<(String, String)>,
    result: Option<(String, String)>,
    /// It takes memrefs of dynamic leading size, so the token count too.
    dynamic: bool,
}

/// The memory space of host memory a function takes (the application's
/// pinned memory; the header says so).
use symm_passes::cudagraph::classify::HOST_MEMORY_SPACE as HOST_MEMORY;

/// The C spelling of an MLIR type at the ABI.
fn c_type(mlir: &str) -> Result<String, String> {
    let scalar = |t: &str| -> Option<&'static str> {
        Some(match t {
            "f32" => "float",
            "f64" => "double",
            "f16" | "bf16" | "i16" => "uint16_t",
            "i8" => "int8_t",
            "i1" => "bool",
            "i32" => "int32_t",
            "i64" | "index" => "int64_t",
            _ => return None,
        })
    };
    if let Some(inner) = mlir
        .strip_prefix("memref<")
        .and_then(|t| t.strip_suffix('>'))
    {
        // `shape x element` first, then a layout and/or a memory space.
        let (shaped, rest) = inner.split_once(", ").unwrap_or((inner, ""));
        if rest.starts_with("strided") || rest.starts_with("affine_map") {
            return Err(format!(
                "{mlir}: entry points take memrefs with the default (contiguous) layout"
            ));
        }
        if !rest.is_empty() && rest != HOST_MEMORY {
            return Err(format!(
                "{mlir}: entry points take memrefs in the default memory space (device \
                 memory the application owns), not {rest}"
            ));
        }
        // A dynamic leading size is the call's token count (a parameter of
        // its own); other sizes are static.
        let static_part = shaped.strip_prefix("?x").unwrap_or(shaped);
        if static_part.contains('?') {
            return Err(format!(
                "{mlir}: only the leading size of an entry point's memref may be dynamic"
            ));
        }
        let element = shaped.rsplit('x').next().unwrap_or(shaped);
        return scalar(element).map(|c| format!("{c} *")).ok_or_else(|| {
            format!("{mlir}: its elements ({element}) have no C type at the entry-point ABI")
        });
    }
    scalar(mlir)
        .map(str::to_owned)
        .ok_or_else(|| format!("{mlir}: no C type at the entry-point ABI"))
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

/// C and C++ keywords, which an entry point may not be named.
const KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "asm",
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "constexpr",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "nullptr",
    "operator",
    "or",
    "private",
    "protected",
    "public",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
];

/// Why `name` cannot be an entry point's C name, if it cannot: it must be
/// a C identifier, not a keyword, and not in the runtime's namespaces.
pub fn c_name_problem(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return Some(format!(
            "its name {name:?} is not a C identifier (letters, digits and '_', not starting \
             with a digit); entry points are C functions: rename it"
        ));
    }
    if KEYWORDS.contains(&name) {
        return Some(format!("its name '{name}' is a C/C++ keyword: rename it"));
    }
    if ["symm_", "mgpu", "__"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
    {
        return Some(format!(
            "its name '{name}' is in a namespace the runtime and compiler reserve (symm_, \
             mgpu, __): rename it"
        ));
    }
    None
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
        if let Some(problem) = c_name_problem(&name) {
            return Err(located(format!("entry point: {problem}")));
        }
        let block = op.region(0).ok().and_then(|r| r.first_block());
        let mut params = Vec::new();
        if let Some(block) = block {
            for index in 0..block.argument_count() {
                let argument = block.argument(index).map_err(|e| located(e.to_string()))?;
                let ty = symm_dialects::type_text(argument.r#type().to_raw());
                let c = c_type(&ty)
                    .map_err(|e| located(format!("@{name}: argument #{index} is {e}")))?;
                params.push((c, ty));
            }
        }
        let signature = op
            .attribute("function_type")
            .map(|a| symm_dialects::attribute_text(a.to_raw()))
            .unwrap_or_default();
        let results = signature
            .rsplit("->")
            .next()
            .unwrap_or("")
            .trim()
            .to_owned();
        let result = match results.as_str() {
            "()" | "" => None,
            single if !single.starts_with('(') => Some((
                c_type(single).map_err(|e| located(format!("@{name}: its result is {e}")))?,
                single.to_owned(),
            )),
            _ => {
                return Err(located(format!(
                    "@{name}: entry points return at most one value (C functions return one)"
                )));
            }
        };
        let dynamic = params.iter().any(|(_, mlir)| mlir.starts_with("memref<?"));
        entries.push(Entry {
            name,
            params,
            result,
            dynamic,
        });
    }
    Ok(entries)
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
         * NULL: the runtime's) and returns at once: 0, or -1 when the call\n \
         * failed (symm_last_error() says why; nothing after the failure ran).\n \
         * Failures that surface later (a peer that never signals) are\n \
         * reported by symm_status() or symm_stream_synchronize(); after a\n \
         * failure, calls fail until one of them has reported it. */\n\
         #ifndef SYMM_COMPILED_{guard}_H\n#define SYMM_COMPILED_{guard}_H\n\n\
         #include <stdbool.h>\n#include <stdint.h>\n\n#include \"symm_runtime.h\"\n\n\
         #ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n"
    );
    for entry in entries {
        let asynchronous = lowered.asynchronous.contains(&entry.name);
        let mut params: Vec<String> = Vec::new();
        if asynchronous || lowered.with_runtime.contains(&entry.name) {
            params.push("symm_runtime *runtime".into());
        }
        if entry.dynamic {
            params.push("int64_t tokens /* the leading size of the ?x memrefs */".into());
        }
        for (index, (c, mlir)) in entry.params.iter().enumerate() {
            let host = if mlir.ends_with(&format!(", {HOST_MEMORY}>")) {
                ": host memory, pinned (cudaHostAlloc, symm_host_alloc)"
            } else {
                ""
            };
            params.push(format!("{c}arg{index} /* {mlir}{host} */"));
        }
        if params.is_empty() {
            params.push("void".into());
        }
        let result = entry
            .result
            .as_ref()
            .map_or("void".to_owned(), |(c, _)| c.trim_end().to_owned());
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

#[cfg(test)]
mod tests {
    use super::{c_name_problem, c_type};

    #[test]
    fn entry_names_must_be_plain_c_identifiers() {
        assert_eq!(c_name_problem("llama_mlp"), None);
        assert_eq!(c_name_problem("_layer2"), None);
        assert!(
            c_name_problem("x(void); int evil")
                .unwrap()
                .contains("not a C identifier")
        );
        assert!(c_name_problem("2x").is_some());
        assert!(c_name_problem("").is_some());
        assert!(c_name_problem("int").unwrap().contains("keyword"));
        assert!(c_name_problem("symm_rt_exit").unwrap().contains("reserve"));
        assert!(c_name_problem("caf\u{e9}").is_some());
    }

    #[test]
    fn maps_memrefs_to_pointers_and_refuses_dynamic_shapes() {
        assert_eq!(c_type("memref<8x64xf32>").unwrap(), "float *");
        assert_eq!(c_type("memref<16xbf16>").unwrap(), "uint16_t *");
        assert_eq!(c_type("i64").unwrap(), "int64_t");
        assert_eq!(c_type("memref<?x64xf32>").unwrap(), "float *");
        assert!(c_type("memref<64x?xf32>").is_err());
        assert!(
            c_type("memref<8xf32, strided<[2]>>")
                .unwrap_err()
                .contains("default (contiguous) layout")
        );
        assert!(
            c_type("memref<8xf32, 1>")
                .unwrap_err()
                .contains("default memory space")
        );
        assert_eq!(
            c_type("memref<?x8xf32, #cudagraph.host>").unwrap(),
            "float *"
        );
        assert!(c_type("memref<8xi7>").unwrap_err().contains("no C type"));
        assert!(c_type("tensor<8xf32>").is_err());
    }
}
