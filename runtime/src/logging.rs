//! The runtime's log: `log` records on stderr, filtered by `SYMM_LOG`
//! (`off`, `error`, `warn`, `info`, `debug`, `trace`; `warn` when unset, so
//! nothing prints on success). `info` covers rendezvous, symmetric
//! allocations and pools with their sizes, CUDA-graph captures, and
//! fallbacks (NCCL without peer access); `debug` adds every replay and
//! every all-reduce's algorithm. An application that installed its own
//! `log` logger keeps it, and gets these records.

use log::{LevelFilter, Log, Metadata, Record};
use std::{cell::Cell, io::Write, sync::Once};

thread_local! {
    /// This thread's rank, once it joined a group (threads are ranks in
    /// `GroupConfig::thread` mode).
    static RANK: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Names this thread's rank in its log lines.
pub fn set_rank(rank: usize) {
    RANK.with(|r| r.set(Some(rank)));
}

struct Stderr {
    level: LevelFilter,
}

impl Log for Stderr {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= self.level
    }

    fn log(&self, record: &Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let level = record.level().as_str().to_ascii_lowercase();
        let line = match RANK.with(Cell::get) {
            Some(rank) => format!("[symm rank {rank}] {level}: {}\n", record.args()),
            None => format!("[symm] {level}: {}\n", record.args()),
        };
        // One write per line, so ranks' lines do not interleave mid-line.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    fn flush(&self) {}
}

/// The level `SYMM_LOG`'s value names, or why not.
pub fn parse_level(value: Option<&str>) -> Result<LevelFilter, String> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(LevelFilter::Warn);
    };
    value.parse().map_err(|_| {
        format!(
            "SYMM_LOG={value} is not a level (off, error, warn, info, debug, trace); using warn"
        )
    })
}

/// Installs the logger once per process (every runtime entry calls it).
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let (level, complaint) = match parse_level(std::env::var("SYMM_LOG").ok().as_deref()) {
            Ok(level) => (level, None),
            Err(message) => (LevelFilter::Warn, Some(message)),
        };
        if log::set_boxed_logger(Box::new(Stderr { level })).is_ok() {
            log::set_max_level(level);
        }
        if let Some(message) = complaint {
            log::warn!("{message}");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_default_to_warn() {
        assert_eq!(parse_level(None), Ok(LevelFilter::Warn));
        assert_eq!(parse_level(Some("")), Ok(LevelFilter::Warn));
        assert_eq!(parse_level(Some("info")), Ok(LevelFilter::Info));
        assert_eq!(parse_level(Some("DEBUG")), Ok(LevelFilter::Debug));
        assert_eq!(parse_level(Some("off")), Ok(LevelFilter::Off));
        assert!(parse_level(Some("loud")).is_err());
    }
}
