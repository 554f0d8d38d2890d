//! The PTX of the kernels, from the `gpu.binary` ops of a lowered module
//! (symm-compile embeds it; symm-kernels commits the library's).

use crate::PassError;

/// Every `assembly = "..."` string of the printed module, unescaped, one
/// after another.
pub fn extract(module: &str) -> String {
    let mut out = String::new();
    let mut rest = module;
    while let Some(at) = rest.find("assembly = \"") {
        rest = &rest[at + "assembly = \"".len()..];
        let (text, tail) = unescape(rest);
        out.push_str(&text);
        out.push('\n');
        rest = tail;
    }
    out
}

/// The functions the PTX declares `.extern` (calls nothing in the module
/// defines), by name.
pub fn unresolved(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter(|line| line.trim_start().starts_with(".extern .func"))
        .filter_map(|line| {
            let rest = line
                .trim_start()
                .strip_prefix(".extern .func")?
                .trim_start();
            // An optional return parameter list comes before the name.
            let rest = match rest.strip_prefix('(') {
                Some(inner) => inner.split_once(')')?.1.trim_start(),
                None => rest,
            };
            let end = rest
                .find(|c: char| c == '(' || c == ';' || c.is_whitespace())
                .unwrap_or(rest.len());
            (end > 0).then(|| rest[..end].to_owned())
        })
        .collect()
}

/// Fails when the kernels call a function nothing defines: the driver
/// would refuse to load the module, and every launch would fail.
pub fn check_resolved(ptx: &str) -> Result<(), PassError> {
    let missing = unresolved(ptx);
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the kernels' PTX calls functions that nothing defines, so the driver could not load \
         it: {}",
        missing.join(", ")
    )
    .into())
}

/// Decodes an MLIR string literal body (`\XX` hex escapes, `\\`, `\"`) up
/// to its closing quote; returns it and what follows.
fn unescape(text: &str) -> (String, &str) {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return (String::from_utf8_lossy(&out).into_owned(), &text[i + 1..]),
            b'\\'
                if i + 2 < bytes.len()
                    && bytes[i + 1].is_ascii_hexdigit()
                    && bytes[i + 2].is_ascii_hexdigit() =>
            {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("3F");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
            }
            b'\\' if i + 1 < bytes.len() => {
                out.push(bytes[i + 1]);
                i += 2;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), "")
}

#[cfg(test)]
mod tests {
    use super::{check_resolved, extract, unresolved};

    #[test]
    fn finds_extern_functions() {
        let ptx = ".version 8.0\n.extern .func  (.param .b32 func_retval0) __nv_expf\n(\n\t.param .b32 __nv_expf_param_0\n);\n.extern .func helper(.param .b64 p);\n.visible .entry k()\n";
        assert_eq!(unresolved(ptx), vec!["__nv_expf", "helper"]);
        assert!(
            check_resolved(ptx)
                .unwrap_err()
                .to_string()
                .contains("__nv_expf, helper")
        );
        assert!(check_resolved(".visible .entry k()\n").is_ok());
    }

    #[test]
    fn unescapes_each_assembly_string() {
        let module = r#"gpu.binary @k [#gpu.object<#nvvm.target, assembly = "a\0Ab\22c\\d">] x assembly = "e""#;
        assert_eq!(extract(module), "a\nb\"c\\d\ne\n");
    }
}
