//! The PTX of the kernels, from the `gpu.binary` ops of the lowered module.

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
    use super::extract;

    #[test]
    fn unescapes_each_assembly_string() {
        let module = r#"gpu.binary @k [#gpu.object<#nvvm.target, assembly = "a\0Ab\22c\\d">] x assembly = "e""#;
        assert_eq!(extract(module), "a\nb\"c\\d\ne\n");
    }
}
