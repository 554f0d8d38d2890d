//! Source locations as users read them.

/// `loc("file.mlir":3:5)` as `file.mlir:3:5`. A location that wraps file
/// locations (`callsite(... at ...)`, `fused[...]`, a name) reads as the
/// first of them: where in the input the op came from.
pub fn plain(location: &str) -> String {
    first_file_location(location).unwrap_or_else(|| {
        location
            .trim_start_matches("loc(")
            .trim_end_matches(')')
            .replace('"', "")
    })
}

/// The first `"file":line:column` in `text`, as `file:line:column`.
fn first_file_location(text: &str) -> Option<String> {
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        let after = &rest[open + 1..];
        let close = after.find('"')?;
        let file = &after[..close];
        let tail = &after[close + 1..];
        if let Some(position) = line_column(tail) {
            return Some(format!("{file}:{position}"));
        }
        rest = tail;
    }
    None
}

/// `:line:column` at the start of `text`, as `line:column`.
fn line_column(text: &str) -> Option<String> {
    let mut parts = text.strip_prefix(':')?.splitn(2, ':');
    let line = parts.next()?;
    let column: String = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    (digits(line) && digits(&column)).then(|| format!("{line}:{column}"))
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn file_line_column() {
        assert_eq!(plain("loc(\"a/b.mlir\":3:5)"), "a/b.mlir:3:5");
    }

    #[test]
    fn wrapped_locations_read_as_their_first_file_location() {
        let callsite = "loc(callsite(\"a.mlir\":103:10 at \"symm_kernels\"))";
        assert_eq!(plain(callsite), "a.mlir:103:10");
        assert_eq!(
            plain("loc(fused[\"x.mlir\":1:2, \"y.mlir\":3:4])"),
            "x.mlir:1:2"
        );
        assert_eq!(plain("loc(\"name\"(\"x.mlir\":7:1))"), "x.mlir:7:1");
        assert_eq!(plain("loc(unknown)"), "unknown");
        assert_eq!(plain("loc(\"only a name\")"), "only a name");
    }
}
