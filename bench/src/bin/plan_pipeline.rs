//! Times `symm-mem-to-dps`, `symm-mem-realize` and `symm-mem-plan` on
//! generated graphs and reports each pool's size against its lower bound.
//!
//!   cargo run --release -p symm-bench --bin plan_pipeline -- [N ...]
//!
//! Each size runs `REPEATS` times on a fresh context; the table shows the
//! median run (by the time of the three passes). Prints a Markdown table;
//! bench/results/ keeps the committed runs.

use melior::{ir::Module, pass::PassManager};
use std::{
    cell::RefCell,
    rc::Rc,
    time::{Duration, Instant},
};
use symm_bench::graph::generate;
use symm_passes::middle_end::{plan, realize, to_dps};

struct Row {
    collectives: usize,
    parse: Duration,
    passes: [Duration; 3],
    pools: Vec<(u64, u64)>,
}

/// Pool bytes and lower bound from a plan remark.
fn parse_pool_remark(text: &str) -> Option<(u64, u64)> {
    let bytes = text.split(": ").nth(1)?.split(' ').next()?.parse().ok()?;
    let bound = text
        .split("lower bound ")
        .nth(1)?
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    Some((bytes, bound))
}

fn run(collectives: usize) -> Result<Row, String> {
    let context = symm_dialects::create_context();
    let pools = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&pools);
    context.attach_diagnostic_handler(move |diagnostic| {
        let text = diagnostic.to_string();
        if let Some(pool) = parse_pool_remark(&text).filter(|_| text.contains("lower bound")) {
            sink.borrow_mut().push(pool);
        }
        true
    });
    let source = generate(collectives, 42);
    let start = Instant::now();
    let mut module = Module::parse(&context, &source).ok_or("generated IR does not parse")?;
    let parse = start.elapsed();

    let mut passes = [Duration::ZERO; 3];
    for (slot, stage) in passes.iter_mut().zip(0..) {
        let manager = PassManager::new(&context);
        match stage {
            0 => manager
                .nested_under("func.func")
                .add_pass(to_dps::DESCRIPTOR.create()),
            1 => manager.add_pass(realize::DESCRIPTOR.create()),
            _ => manager.add_pass(plan::DESCRIPTOR.create()),
        }
        let start = Instant::now();
        manager
            .run(&mut module)
            .map_err(|e| format!("pass {stage} failed: {e}"))?;
        *slot = start.elapsed();
    }
    let pools = pools.borrow().clone();
    Ok(Row {
        collectives,
        parse,
        passes,
        pools,
    })
}

const REPEATS: usize = 3;

/// The median of `REPEATS` runs by total pass time.
fn median_run(collectives: usize) -> Result<Row, String> {
    let mut rows = (0..REPEATS)
        .map(|_| run(collectives))
        .collect::<Result<Vec<_>, _>>()?;
    rows.sort_by_key(|row| row.passes.iter().sum::<Duration>());
    Ok(rows.swap_remove(REPEATS / 2))
}

fn ms(duration: Duration) -> String {
    format!("{:.1}", duration.as_secs_f64() * 1e3)
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100, 1_000, 10_000, 100_000]
    } else {
        sizes
    };
    println!(
        "| collectives | parse ms | to-dps ms | realize ms | plan ms | 3 passes ms | µs per collective | pool / lower bound |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---|");
    for n in sizes {
        match median_run(n) {
            Ok(row) => {
                let total: Duration = row.passes.iter().sum();
                let ratios: Vec<String> = row
                    .pools
                    .iter()
                    .map(|(bytes, bound)| {
                        format!(
                            "{bytes}/{bound} = {:.3}",
                            *bytes as f64 / (*bound).max(1) as f64
                        )
                    })
                    .collect();
                println!(
                    "| {} | {} | {} | {} | {} | {} | {:.2} | {} |",
                    row.collectives,
                    ms(row.parse),
                    ms(row.passes[0]),
                    ms(row.passes[1]),
                    ms(row.passes[2]),
                    ms(total),
                    total.as_secs_f64() * 1e6 / row.collectives.max(1) as f64,
                    ratios.join("; ")
                );
            }
            Err(error) => {
                eprintln!("plan_pipeline: {n} collectives: {error}");
                std::process::exit(1);
            }
        }
    }
}
