//! Wording of remarks.

/// "1 buffer", "2 buffers".
pub fn plural(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}
