//! Structure-aware mutations of MLIR text: they know what types, shapes,
//! numbers, symbols, attributes and regions look like, so most mutants
//! still parse and reach the passes, where the interesting failures are.

/// A small, fast, seedable generator (splitmix64): campaigns replay.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    /// One of `words`.
    pub fn word(&mut self, words: &[&'static str]) -> &'static str {
        words[self.below(words.len())]
    }
}

const TYPES: &[&str] = &[
    "f32",
    "f16",
    "bf16",
    "f64",
    "i1",
    "i8",
    "i32",
    "i64",
    "index",
    "f8E4M3FN",
    "complex<f32>",
    "vector<4xf32>",
    "memref<4xf32>",
    "none",
    "tensor<4xf32>",
];
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "8",
    "9",
    "64",
    "127",
    "4096",
    "65536",
    "2147483647",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "0.0",
    "-0.0",
    "1.0e38",
    "0x7FC00000",
    "1e-45",
];
const DIMS: &[&str] = &[
    "?",
    "0",
    "1",
    "3",
    "4096",
    "2147483648",
    // Sizes whose bytes overflow 64 bits only once multiplied out.
    "1152921504606846976",
    "4611686018427387904",
    "9223372036854775807",
];
const FRAGMENTS: &[&str] = &[
    "#symm_mem.allocator<symmetric, @tp>",
    "#symm_mem.allocator<symmetric, @nope>",
    "#cudagraph.host",
    "{symm_mem.symmetric = #symm_mem.allocator<symmetric, @tp>}",
    "attributes {symm_mem.max_tokens = 0 : i64}",
    "attributes {symm_mem.max_tokens = 16 : i64}",
    "attributes {cudagraph.capturable}",
    "attributes {symm_mem.allocates_symmetric}",
    "symm_mem.group @tp world_size(0)",
    "symm_mem.group @tp world_size(9)",
    "symm_mem.group @tp",
    "array<i64: 1, 2>",
    "array<i32>",
    "affine_map<(d0, d1) -> (d1, d0)>",
    "affine_map<(d0) -> (d0 floordiv 0)>",
    "dense<1.0> : tensor<4xf32>",
    "strided<[?, 1], offset: ?>",
    "loc(\"x.mlir\":1:1)",
    "%c0",
    "^bb1:",
    "{",
    "}",
    "(",
    ")",
    "\"",
    "<",
    ">",
    ":",
    ",",
];

/// Positions of every match of `pred` runs in `text` (start, end).
fn tokens(text: &str, pred: impl Fn(char) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (pred(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

fn replace(text: &str, (start, end): (usize, usize), with: &str) -> String {
    format!("{}{with}{}", &text[..start], &text[end..])
}

/// One mutation of `text` (bytes: the result may not be UTF-8). `other`
/// is another seed, for splicing.
pub fn mutate(text: &str, other: &str, rng: &mut Rng) -> Vec<u8> {
    let lines: Vec<&str> = text.lines().collect();
    let text = text.to_owned();
    let out = match rng.below(14) {
        // Numbers.
        0 | 1 => {
            let numbers = tokens(&text, |c| c.is_ascii_digit());
            if numbers.is_empty() {
                text
            } else {
                let at = *rng.pick(&numbers);
                replace(&text, at, rng.word(NUMBERS))
            }
        }
        // Element and scalar types.
        2 | 3 => {
            let words = tokens(&text, |c| c.is_ascii_alphanumeric());
            let typed: Vec<(usize, usize)> = words
                .into_iter()
                .filter(|(s, e)| {
                    let w = &text[*s..*e];
                    TYPES.contains(&w) || w.starts_with('i') && w[1..].parse::<u32>().is_ok()
                })
                .collect();
            if typed.is_empty() {
                text
            } else {
                let at = *rng.pick(&typed);
                replace(&text, at, rng.word(TYPES))
            }
        }
        // Shapes: one dimension of an `AxB` shape.
        4 => {
            let dims: Vec<(usize, usize)> = tokens(&text, |c| c.is_ascii_digit())
                .into_iter()
                .filter(|(_, e)| text[*e..].starts_with('x'))
                .collect();
            if dims.is_empty() {
                text
            } else {
                let at = *rng.pick(&dims);
                replace(&text, at, rng.word(DIMS))
            }
        }
        // Symbols: point a reference at another symbol, or a new one.
        5 => {
            let symbols = tokens(&text, |c| c.is_ascii_alphanumeric() || c == '_' || c == '@');
            let refs: Vec<(usize, usize)> = symbols
                .into_iter()
                .filter(|(s, _)| text[*s..].starts_with('@'))
                .collect();
            if refs.is_empty() {
                text
            } else {
                let at = *rng.pick(&refs);
                let to = *rng.pick(&refs);
                let name = if rng.below(3) == 0 {
                    "@fresh".to_owned()
                } else {
                    text[to.0..to.1].to_owned()
                };
                replace(&text, at, &name)
            }
        }
        // Attributes and structure: insert a fragment at a token boundary.
        6 | 7 => {
            let spaces = tokens(&text, |c| c == ' ' || c == '\n');
            if spaces.is_empty() {
                format!("{text}{}", rng.word(FRAGMENTS))
            } else {
                let at = rng.pick(&spaces).0;
                format!("{} {}{}", &text[..at], rng.word(FRAGMENTS), &text[at..])
            }
        }
        // Lines: delete, duplicate, swap.
        8 | 9 => {
            let mut lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            if lines.len() > 1 {
                let a = rng.below(lines.len());
                let b = rng.below(lines.len());
                match rng.below(3) {
                    0 => {
                        lines.remove(a);
                    }
                    1 => {
                        let copy = lines[a].clone();
                        lines.insert(b, copy);
                    }
                    _ => lines.swap(a, b),
                }
            }
            lines.join("\n")
        }
        // Regions: drop a brace.
        10 => {
            let braces: Vec<(usize, usize)> = tokens(&text, |c| c == '{' || c == '}');
            if braces.is_empty() {
                text
            } else {
                let (s, _) = *rng.pick(&braces);
                replace(&text, (s, s + 1), "")
            }
        }
        // Splice: lines of another seed.
        11 => {
            let theirs: Vec<&str> = other.lines().collect();
            if theirs.is_empty() || lines.is_empty() {
                text
            } else {
                let from = rng.below(theirs.len());
                let count = 1 + rng.below(8);
                let at = rng.below(lines.len());
                let mut out: Vec<&str> = lines[..at].to_vec();
                out.extend(theirs.iter().skip(from).take(count));
                out.extend(&lines[at..]);
                out.join("\n")
            }
        }
        // Truncation.
        12 => {
            let mut cut = rng.below(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text[..cut].to_owned()
        }
        // Bytes: anything, UTF-8 or not.
        _ => {
            let mut bytes = text.into_bytes();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bytes.len() + 1);
                let byte =
                    [0xFF, 0xC3, 0x80, b'"', b'\\', b'%', b'#', b'^', 0x00, b'\n'][rng.below(10)];
                bytes.insert(at, byte);
            }
            return bytes;
        }
    };
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_change_text_and_replay_from_a_seed() {
        let seed = "func.func @f(%a: memref<4x8xf32>) {\n  return\n}\n";
        let run = |s| {
            let mut rng = Rng::new(s);
            (0..50)
                .map(|_| mutate(seed, seed, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert!(run(7).iter().any(|m| m.as_slice() != seed.as_bytes()));
    }

    #[test]
    fn tokens_find_runs() {
        assert_eq!(
            tokens("a12b3", |c| c.is_ascii_digit()),
            vec![(1, 3), (4, 5)]
        );
    }
}
