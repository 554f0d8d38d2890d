//! How close offset assignment gets to the lower bound (peak live bytes) on
//! random interval sets that are harder than the generated graphs: sizes
//! log-uniform from 64 B to 1 MiB, lifetimes from 1 to 2000 program points.
//!
//!   cargo run --release -p symm-bench --bin offsets_quality

use std::time::Instant;
use symm_bench::rng::Rng;
use symm_passes::middle_end::plan::{Interval, assign_offsets, lower_bound};

fn random_intervals(n: usize, seed: u64) -> Vec<Interval> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let start = i * 2 + (rng.next_u64() % 4) as usize;
            let life = 1 + (rng.next_u64() % (1 + rng.next_u64() % 2000)) as usize;
            let bytes = 64u64 << (rng.next_u64() % 15);
            Interval {
                start,
                end: start + life,
                bytes: bytes + rng.next_u64() % bytes,
            }
        })
        .collect()
}

fn main() {
    println!("| buffers | seeds | mean pool / lower bound | worst | mean ms per assignment |");
    println!("|---:|---:|---:|---:|---:|");
    for n in [100usize, 1_000, 10_000, 100_000] {
        let seeds = 5u64;
        let (mut sum, mut worst, mut time) = (0.0f64, 0.0f64, 0.0f64);
        for seed in 1..=seeds {
            let intervals = random_intervals(n, seed * 7919);
            let start = Instant::now();
            let placement = assign_offsets(&intervals, 128);
            time += start.elapsed().as_secs_f64() * 1e3;
            let ratio = placement.pool_bytes as f64 / lower_bound(&intervals, 128) as f64;
            sum += ratio;
            worst = worst.max(ratio);
        }
        println!(
            "| {n} | {seeds} | {:.3} | {:.3} | {:.1} |",
            sum / seeds as f64,
            worst,
            time / seeds as f64
        );
    }
}
