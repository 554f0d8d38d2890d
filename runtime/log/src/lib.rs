//! The runtime's log: `tracing` events on stderr, filtered by `SYMM_LOG`
//! in `RUST_LOG`'s syntax (`info`, `symm_runtime::collectives=debug`,
//! `warn,symm_runtime::session=trace`, ...), else by `RUST_LOG`, else at
//! `warn`, so nothing prints on success. `info` covers rendezvous,
//! symmetric allocations and pools with their sizes, CUDA-graph captures,
//! the measured kernel choices and fallbacks (NCCL without peer access);
//! `debug` adds every replay and every all-reduce's algorithm. An
//! application that installed its own `tracing` subscriber keeps it, and
//! gets these events.
//!
//! Each line carries its rank once: `[symm rank R] level: message` in a
//! process of several ranks or one that joined a group, and `[symm]
//! level: message` under `symm-launch`, which prefixes every line of a
//! rank with `[rank R]` itself (it sets `SYMM_LAUNCH_PREFIXES`).

use std::{cell::Cell, fmt, sync::Once};
use tracing::{Event, Subscriber};
use tracing_subscriber::{
    EnvFilter,
    fmt::{FmtContext, FormatEvent, FormatFields, format::Writer},
    registry::LookupSpan,
};

/// Set by `symm-launch` in its ranks' environment: it prefixes their lines.
pub const LAUNCH_PREFIXES: &str = "SYMM_LAUNCH_PREFIXES";

thread_local! {
    /// This thread's rank, once it joined a group (threads are ranks in
    /// `GroupConfig::thread` mode).
    static RANK: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Names this thread's rank in its log lines.
pub fn set_rank(rank: usize) {
    RANK.with(|r| r.set(Some(rank)));
}

/// `[symm rank R] level: message fields` (the rank only where no launcher
/// prefixes the line with it).
struct RankLines {
    launcher_prefixes: bool,
}

impl<S, N> FormatEvent<S, N> for RankLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        context: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        match RANK.with(Cell::get) {
            Some(rank) if !self.launcher_prefixes => write!(writer, "[symm rank {rank}] ")?,
            _ => write!(writer, "[symm] ")?,
        }
        let level = event.metadata().level().as_str().to_ascii_lowercase();
        write!(writer, "{level}: ")?;
        context
            .field_format()
            .format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// The filter `SYMM_LOG` (else `RUST_LOG`) names, and a complaint when
/// the value does not parse (the filter is then `warn`).
pub fn filter(symm_log: Option<&str>, rust_log: Option<&str>) -> (EnvFilter, Option<String>) {
    let chosen = [("SYMM_LOG", symm_log), ("RUST_LOG", rust_log)]
        .into_iter()
        .find_map(|(name, value)| {
            value
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(|v| (name, v))
        });
    let Some((name, value)) = chosen else {
        return (EnvFilter::new("warn"), None);
    };
    match EnvFilter::try_new(value) {
        Ok(filter) => (filter, None),
        Err(error) => (
            EnvFilter::new("warn"),
            Some(format!(
                "{name}={value} is not a log filter ({error}); it takes RUST_LOG's syntax, \
                 for example info or symm_runtime::collectives=debug; using warn"
            )),
        ),
    }
}

/// Installs the subscriber once per process (every runtime entry calls
/// it), unless the application installed one.
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let (filter, complaint) = filter(
            std::env::var("SYMM_LOG").ok().as_deref(),
            std::env::var("RUST_LOG").ok().as_deref(),
        );
        let lines = RankLines {
            launcher_prefixes: std::env::var_os(LAUNCH_PREFIXES).is_some(),
        };
        let installed = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .event_format(lines)
            .try_init()
            .is_ok();
        if let Some(message) = complaint {
            if installed {
                tracing::warn!("{message}");
            } else {
                eprintln!("[symm] warn: {message}");
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(filter: &EnvFilter) -> String {
        filter.to_string()
    }

    #[test]
    fn symm_log_takes_rust_log_syntax_before_rust_log() {
        assert_eq!(text(&filter(None, None).0), "warn");
        assert_eq!(text(&filter(Some(""), None).0), "warn");
        assert_eq!(text(&filter(Some("info"), Some("trace")).0), "info");
        assert_eq!(text(&filter(None, Some("debug")).0), "debug");
        let modules = filter(Some("warn,symm_runtime::collectives=debug"), None);
        assert!(modules.1.is_none());
        assert!(text(&modules.0).contains("symm_runtime::collectives=debug"));
    }

    #[test]
    fn a_filter_that_does_not_parse_is_named_and_falls_back_to_warn() {
        let (fallback, complaint) = filter(Some("symm_runtime=loud"), None);
        assert_eq!(text(&fallback), "warn");
        let complaint = complaint.expect("a complaint");
        assert!(complaint.starts_with("SYMM_LOG=symm_runtime=loud is not a log filter"));
        assert!(filter(None, Some("=")).1.unwrap().starts_with("RUST_LOG="));
    }
}
