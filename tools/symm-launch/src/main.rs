//! `symm-launch -n N [--gpus G] [--timeout S] PROGRAM [ARGS...]`: the command line
//! (clap) of `symm_runtime::launcher`. `--help` and `--version` exit 0, a
//! bad command line 2 with the usage, a launch that cannot start 2.

use clap::Parser;
use std::time::Duration;
use symm_runtime::launcher::{LaunchSpec, launch};

#[derive(Parser, Debug)]
#[command(
    name = "symm-launch",
    version,
    about = "Runs N ranks of a program with the torchrun environment (RANK, WORLD_SIZE, \
             MASTER_ADDR, ...), each output line prefixed with its rank",
    after_help = "When a rank fails, the others are stopped (SIGTERM, then SIGKILL after 3 s) \
                  and the launcher exits with that rank's status. A SIGINT, SIGTERM or SIGHUP \
                  to the launcher is forwarded to the ranks (SIGKILL after 3 s); it then exits \
                  with 128 + the signal. NVLink multicast stays off (NCCL_NVLS_ENABLE=0, \
                  TORCH_SYMM_MEM_DISABLE_MULTICAST=1)."
)]
struct Cli {
    /// Ranks to run (one per GPU).
    #[arg(
        short = 'n',
        long = "nproc",
        visible_alias = "nproc-per-node",
        value_name = "N",
        value_parser = clap::value_parser!(u16).range(1..)
    )]
    ranks: u16,
    /// Spread the ranks over G GPUs, rank r on GPU r mod G (LOCAL_RANK).
    /// Fewer GPUs than ranks checks multi-rank code on one machine's
    /// GPUs; the ranks sharing a GPU take turns on it, so timings mean
    /// nothing.
    #[arg(long, value_name = "G", value_parser = clap::value_parser!(u16).range(1..))]
    gpus: Option<u16>,
    /// Stop the ranks if they still run after this many seconds (exit 124).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// The program each rank runs.
    #[arg(value_name = "PROGRAM")]
    program: String,
    /// Its arguments.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    args: Vec<String>,
}

fn main() {
    let cli = Cli::parse();
    let timeout = match cli.timeout {
        Some(seconds) if !(seconds.is_finite() && seconds > 0.0) => {
            eprintln!("symm-launch: --timeout must be a positive number of seconds");
            std::process::exit(2);
        }
        seconds => seconds.map(Duration::from_secs_f64),
    };
    let spec = LaunchSpec {
        ranks: usize::from(cli.ranks),
        program: cli.program,
        args: cli.args,
        timeout,
        gpus: cli.gpus.map(usize::from),
    };
    std::process::exit(match launch(&spec) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("symm-launch: {error}");
            2
        }
    });
}
