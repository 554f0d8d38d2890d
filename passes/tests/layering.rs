//! How the workspace's crates are layered, read from their sources:
//!
//! - symm-passes: the folders are the pipeline's stages, and a stage
//!   imports only earlier stages and the shared `ir` and `analysis`
//!   modules (which import nothing else);
//! - symm-runtime: its top-level modules import each other without a
//!   cycle, and nothing imports the C ABI (`capi`), which sits on
//!   `session`.
//!
//! Each `crate::` path is checked, so an import against the layering fails
//! here rather than tangling the modules again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The folders in pipeline order; `ir` and `analysis` are shared.
const STAGES: &[&str] = &[
    "ir",
    "analysis",
    "middle_end",
    "cudagraph",
    "collectives",
    "matmul",
    "to_runtime",
    "gpu_codegen",
];
const SHARED: &[&str] = &["ir", "analysis"];

fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the crate's sources are readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The code of a file without its comments.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segment of every `crate::` path: `crate::a::b` and each
/// top-level item of `use crate::{a::x, b}`.
fn crate_modules(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            for ch in group.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 || (depth == 1 && ch == ',') {
                    found.push(item.trim().split("::").next().unwrap_or("").to_owned());
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else {
                    item.push(ch);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            found.push(name);
        }
    }
    found
}

fn violations(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(root, &mut files);
    let position = |name: &str| STAGES.iter().position(|s| *s == name);
    let mut bad = Vec::new();
    for file in files {
        let relative = file.strip_prefix(root).expect("under the root");
        let Some(stage) = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .filter(|s| position(s).is_some())
        else {
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("a readable source");
        for module in crate_modules(&code(&text)) {
            let Some(target) = position(&module) else {
                continue;
            };
            let backwards = target > position(stage).expect("a stage");
            let shared_reaches_out = SHARED.contains(&stage) && !SHARED.contains(&module.as_str());
            if module != stage && (backwards || shared_reaches_out) {
                bad.push(format!("{} ({stage}) imports {module}", relative.display()));
            }
        }
    }
    bad.sort();
    bad.dedup();
    bad
}

#[test]
fn stages_import_only_earlier_stages_and_shared_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&root);
    assert!(
        bad.is_empty(),
        "imports against the pipeline:\n{}",
        bad.join("\n")
    );
}

#[test]
fn crate_paths_are_read_in_both_forms() {
    let found = crate_modules(
        "use crate::{ir::{Op, Val}, analysis::linalg::body, PassDescriptor};\nlet x = crate::matmul::kernel::Tile;",
    );
    assert_eq!(found, ["ir", "analysis", "PassDescriptor", "matmul"]);
}

#[test]
fn a_backward_import_is_caught() {
    let dir = std::env::temp_dir().join(format!("symm-layering-{}", std::process::id()));
    let analysis = dir.join("analysis");
    std::fs::create_dir_all(&analysis).expect("a scratch folder");
    std::fs::write(
        analysis.join("bad.rs"),
        "use crate::to_runtime::KERNEL_MODULE; // a shared module reaching into a stage\n",
    )
    .expect("a scratch file");
    let bad = violations(&dir);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(bad, ["analysis/bad.rs (analysis) imports to_runtime"]);
}

// symm-runtime: no import cycles.

/// The top-level module a source file belongs to (`capi/compiled.rs` is
/// `capi`, `cuda.rs` is `cuda`); `None` for the crate root and binaries.
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    if first == "bin" || first == "lib.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_owned())
}

/// A cycle of the graph, if it has one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut found = path[start..].to_vec();
            found.push(node.to_owned());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

fn import_graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(root, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(root).expect("under the root");
        let Some(module) = module_of(relative) else {
            continue;
        };
        graph.entry(module.clone()).or_default();
        let text = std::fs::read_to_string(file).expect("a readable source");
        for target in crate_modules(&code(&text)) {
            if target != module && !target.is_empty() {
                graph.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    // Only edges between modules of the crate (not `Error`, `Result`).
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for targets in graph.values_mut() {
        targets.retain(|t| modules.contains(t));
    }
    graph
}

#[test]
fn the_runtime_modules_import_each_other_without_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src");
    let graph = import_graph(&root);
    assert!(graph.contains_key("capi") && graph.contains_key("session"));
    if let Some(found) = cycle(&graph) {
        panic!("an import cycle: {}", found.join(" -> "));
    }
    // The ABI sits on top: no module imports it.
    let users: Vec<&String> = graph
        .iter()
        .filter(|(_, targets)| targets.contains("capi"))
        .map(|(module, _)| module)
        .collect();
    assert!(users.is_empty(), "modules importing capi: {users:?}");
}

#[test]
fn a_cycle_is_found_and_named() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("capi", &["session"][..]),
        ("session", &["compiled"][..]),
        ("compiled", &["capi"][..]),
        ("cuda", &[][..]),
    ]
    .into_iter()
    .map(|(m, ts)| (m.to_owned(), ts.iter().map(|t| t.to_string()).collect()))
    .collect();
    assert_eq!(
        cycle(&graph),
        Some(vec![
            "capi".to_owned(),
            "session".to_owned(),
            "compiled".to_owned(),
            "capi".to_owned()
        ])
    );
}
