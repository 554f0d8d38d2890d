//! Source locations as users read them.

/// `loc("file.mlir":3:5)` as `file.mlir:3:5`.
pub fn plain(location: &str) -> String {
    location
        .trim_start_matches("loc(")
        .trim_end_matches(')')
        .replace('"', "")
}

#[cfg(test)]
mod tests {
    #[test]
    fn file_line_column() {
        assert_eq!(super::plain("loc(\"a/b.mlir\":3:5)"), "a/b.mlir:3:5");
    }
}
