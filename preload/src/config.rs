//! Configuration, read once from the environment.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `PRLX_SESSION` | session name (in a multi-process job, each rank's is `<name>.rank<N>`) | `<program>-<pid>-<unix time>`; per rank `<program>-<job id>.rank<N>` |
//! | `PRLX_SOCKET` | the daemon's socket | the user socket, else the system socket |
//! | `PRLX_TRACE_DIR` | write sessions as directories here instead of sending them to a daemon | `$XDG_RUNTIME_DIR/prlx/sessions`, else `/tmp/prlx-<uid>/sessions` |
//! | `PRLX_FILTER` | comma-separated kernel-name globs (`*`, `?`); only matching kernels are recorded | all |
//! | `PRLX_EVENTS_PER_WARP` | trace slots per warp | 4096 |
//! | `PRLX_SAMPLE_RATE` | record one event in N | 1 |
//! | `PRLX_HISTORY_DEPTH` | history ring entries per warp (0 = off) | 0 |
//! | `PRLX_SNAPSHOT_DEPTH` | snapshot ring entries per warp (0 = off) | 0 |
//! | `PRLX_MAX_LAUNCHES` | stop recording after this many launches | unlimited |
//! | `PRLX_CAPTURE_BUDGET_MB` | device memory one capture's trace buffers may take, in MiB; a launch with more warps than `PRLX_EVENTS_PER_WARP` slots each fit gets fewer slots per warp, and its `session.json` record says so (`truncation`) | a quarter of the device's free memory at the first capture, at most 8 GiB (2 GiB where the driver cannot say) |
//! | `PRLX_BASELINE` | with a daemon: diff each launch against this session as it arrives | unset |
//! | `PRLX_LOG` | `off`, `error`, `warn`, `info`, `debug` | `warn` |
//! | `PRLX_CAPTURE_LIBS` | whose modules are instrumented: `app` (the application's own; vendor libraries' modules — cuBLAS/cuBLASLt, cuDNN, cuFFT, cuSPARSE, cuRAND, cuSOLVER, NCCL, libtorch_cuda, libc10_cuda …, listed in `module_load::caller::VENDOR_LIBRARIES` — are loaded as they are and their launches recorded as metadata), `all`, or a comma list of library file-name globs to instrument too (`libcublas*,libcudnn*`, may include `app`). The owner is the library holding the image, else the caller of the load | `app` |
//! | `PRLX_DISABLE` | `1`/`true`/`yes`/`on`: pass every call through untouched | unset |
//!
//! The numeric settings' defaults and bounds are defined once, in
//! `prlx_trace::limits` (the NVBit tool's header is generated from it).
//!
//! A malformed value is reported once on stderr and the default is used:
//! the shim never stops the application over its own configuration.

use prlx_trace::limits::{self, Setting};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Off,
    Error,
    Warn,
    Info,
    Debug,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub disabled: bool,
    pub session: String,
    /// This process's rank in a multi-process job (then `session` is
    /// `<job>.rank<N>`) and the job's name.
    pub rank: Option<u32>,
    pub job: Option<String>,
    pub socket: Option<PathBuf>,
    /// Set explicitly by `PRLX_TRACE_DIR`.
    pub trace_dir: Option<PathBuf>,
    pub filter: Vec<String>,
    pub events_per_warp: u32,
    pub sample_rate: u32,
    pub history_depth: u32,
    pub snapshot_depth: u32,
    pub max_launches: Option<u64>,
    /// `PRLX_CAPTURE_BUDGET_MB`, in bytes; None: chosen from the device.
    pub capture_budget: Option<u64>,
    pub log: LogLevel,
    /// Problems found while reading the environment, reported once.
    pub warnings: Vec<String>,
}

/// The largest `PRLX_CAPTURE_BUDGET_MB`: 1 TiB, beyond any device's memory.
const MAX_CAPTURE_BUDGET_MB: u64 = 1 << 20;

impl Config {
    pub fn from_env() -> Config {
        Config::from_lookup(|key| std::env::var(key).ok())
    }

    /// Reads the configuration through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let mut warnings = Vec::new();
        let mut number = |key: &str, default: u32, min: u32, max: u32| -> u32 {
            match lookup(key) {
                None => default,
                Some(text) => match text.trim().parse::<u32>() {
                    Ok(v) if (min..=max).contains(&v) => v,
                    _ => {
                        warnings.push(format!(
                            "{key}={text:?} is not a number in {min}..={max}; using {default}"
                        ));
                        default
                    }
                },
            }
        };
        // Defaults and bounds: one definition for every recorder.
        let mut setting = |s: Setting| number(s.name, s.default, s.min, s.max);
        let events_per_warp = setting(limits::EVENTS_PER_WARP);
        let sample_rate = setting(limits::SAMPLE_RATE);
        let history_depth = setting(limits::HISTORY_DEPTH);
        let snapshot_depth = setting(limits::SNAPSHOT_DEPTH);
        let max_launches = match lookup("PRLX_MAX_LAUNCHES") {
            None => None,
            Some(text) => match text.trim().parse::<u64>() {
                Ok(v) => Some(v),
                Err(_) => {
                    warnings.push(format!(
                        "PRLX_MAX_LAUNCHES={text:?} is not a number; recording every launch"
                    ));
                    None
                }
            },
        };
        let capture_budget = match lookup("PRLX_CAPTURE_BUDGET_MB") {
            None => None,
            Some(text) => match text.trim().parse::<u64>() {
                Ok(mb) if (1..=MAX_CAPTURE_BUDGET_MB).contains(&mb) => Some(mb << 20),
                _ => {
                    warnings.push(format!(
                        "PRLX_CAPTURE_BUDGET_MB={text:?} is not a number of MiB in 1..={MAX_CAPTURE_BUDGET_MB}; choosing the budget from the device's free memory"
                    ));
                    None
                }
            },
        };
        let log = match lookup("PRLX_LOG").as_deref().map(str::trim) {
            None | Some("") | Some("warn") => LogLevel::Warn,
            Some("off") | Some("0") => LogLevel::Off,
            Some("error") => LogLevel::Error,
            Some("info") => LogLevel::Info,
            Some("debug") | Some("1") => LogLevel::Debug,
            Some(other) => {
                warnings.push(format!(
                    "PRLX_LOG={other:?} is not off|error|warn|info|debug"
                ));
                LogLevel::Warn
            }
        };
        let filter = lookup("PRLX_FILTER")
            .map(|f| {
                f.split(',')
                    .map(str::trim)
                    .filter(|g| !g.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let non_empty = |key: &str| lookup(key).filter(|v| !v.trim().is_empty());
        let session = match non_empty("PRLX_SESSION") {
            Some(raw) => {
                let name = prlx_session::session_name_from(&raw);
                if let Err(problem) = prlx_session::check_session_name(&raw) {
                    warnings.push(format!("PRLX_SESSION: {problem}; using {name:?}"));
                }
                name
            }
            None => default_session_name(),
        };
        // One session per rank of a multi-process job: `<job>.rank<N>`.
        let rank = crate::rank::rank(&lookup, &mut warnings);
        let (session, job) = match rank {
            None => (session, None),
            Some((rank, _)) => {
                let job = match non_empty("PRLX_SESSION") {
                    Some(_) => session,
                    None => crate::rank::default_job_name(&lookup, &program_name()),
                };
                (crate::rank::session_for(&job, rank), Some(job))
            }
        };
        let disabled = match lookup("PRLX_DISABLE") {
            None => false,
            Some(text) => parse_flag(&text).unwrap_or_else(|| {
                warnings.push(format!(
                    "PRLX_DISABLE={text:?} is not 1/0, true/false, yes/no or on/off; not disabled"
                ));
                false
            }),
        };
        Config {
            disabled,
            session,
            rank: rank.map(|(r, _)| r),
            job,
            socket: non_empty("PRLX_SOCKET").map(PathBuf::from),
            trace_dir: non_empty("PRLX_TRACE_DIR").map(PathBuf::from),
            filter,
            events_per_warp,
            sample_rate,
            history_depth,
            snapshot_depth,
            max_launches,
            capture_budget,
            log,
            warnings,
        }
    }

    /// Whether launches of `kernel` are recorded.
    pub fn wants(&self, kernel: &str) -> bool {
        self.filter.is_empty() || self.filter.iter().any(|g| glob_match(g, kernel))
    }
}

/// A yes/no variable: the usual spellings, any case; `None` for anything else.
fn parse_flag(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" | "y" => Some(true),
        "" | "0" | "false" | "no" | "off" | "n" => Some(false),
        _ => None,
    }
}

fn program_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "app".to_owned())
}

fn default_session_name() -> String {
    let program = program_name();
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    prlx_session::session_name_from(&format!("{program}-{}-{secs}", std::process::id()))
}

/// Glob match with `*` (any run) and `?` (one character), over chars.
///
/// Runs on every launch while a filter is set, so ASCII names (all kernel
/// names in practice) are matched as bytes without allocating.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    if pattern.is_ascii() && text.is_ascii() {
        return glob_match_slices(pattern.as_bytes(), text.as_bytes(), b'*', b'?');
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    glob_match_slices(&p, &t, '*', '?')
}

fn glob_match_slices<T: PartialEq + Copy>(p: &[T], t: &[T], any_run: T, any_one: T) -> bool {
    let (mut pi, mut ti) = (0, 0);
    // Position of the last `*` and the text index it is currently matching up to.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == any_one || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == any_run {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == any_run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Config {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults() {
        let c = config(&[]);
        assert!(!c.disabled);
        assert_eq!(c.events_per_warp, 4096);
        assert_eq!(c.sample_rate, 1);
        assert_eq!((c.history_depth, c.snapshot_depth), (0, 0));
        assert_eq!(c.max_launches, None);
        assert_eq!(c.capture_budget, None);
        assert_eq!(c.log, LogLevel::Warn);
        assert!(c.warnings.is_empty());
        assert!(c.wants("anything"));
    }

    #[test]
    fn values_and_bad_values() {
        let c = config(&[
            ("PRLX_EVENTS_PER_WARP", "256"),
            ("PRLX_SAMPLE_RATE", "0"),
            ("PRLX_SNAPSHOT_DEPTH", "8"),
            ("PRLX_MAX_LAUNCHES", "lots"),
            ("PRLX_SESSION", "../run a"),
            ("PRLX_FILTER", "reduce*, saxpy"),
            ("PRLX_LOG", "debug"),
        ]);
        assert_eq!(c.events_per_warp, 256);
        assert_eq!(c.sample_rate, 1, "0 is out of range, default kept");
        assert_eq!(c.snapshot_depth, 8);
        assert_eq!(c.max_launches, None);
        assert_eq!(c.session, "_run_a");
        assert_eq!(c.log, LogLevel::Debug);
        assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("PRLX_SAMPLE_RATE"));
        assert!(
            c.warnings[2].contains("PRLX_SESSION") && c.warnings[2].contains("\"_run_a\""),
            "{:?}",
            c.warnings
        );
        assert!(c.wants("reduce_sum") && c.wants("saxpy") && !c.wants("saxpy2"));
    }

    #[test]
    fn capture_budget_in_mib_or_from_the_device() {
        let c = config(&[("PRLX_CAPTURE_BUDGET_MB", " 512 ")]);
        assert_eq!(c.capture_budget, Some(512 << 20));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        for bad in ["0", "-1", "lots", "2000000"] {
            let c = config(&[("PRLX_CAPTURE_BUDGET_MB", bad)]);
            assert_eq!(c.capture_budget, None, "{bad}");
            assert_eq!(c.warnings.len(), 1, "{bad}: {:?}", c.warnings);
            assert!(c.warnings[0].starts_with("PRLX_CAPTURE_BUDGET_MB="));
        }
    }

    #[test]
    fn disable_takes_the_usual_spellings_and_names_others() {
        for yes in ["1", "true", "YES", "on", " y "] {
            let c = config(&[("PRLX_DISABLE", yes)]);
            assert!(
                c.disabled && c.warnings.is_empty(),
                "{yes}: {:?}",
                c.warnings
            );
        }
        for no in ["0", "false", "No", "off", ""] {
            let c = config(&[("PRLX_DISABLE", no)]);
            assert!(
                !c.disabled && c.warnings.is_empty(),
                "{no}: {:?}",
                c.warnings
            );
        }
        let c = config(&[("PRLX_DISABLE", "maybe")]);
        assert!(!c.disabled);
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.warnings[0].contains("PRLX_DISABLE=\"maybe\""),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn session_names_follow_the_daemons_rule_and_say_so() {
        let long = "r".repeat(120);
        for raw in [".hidden", long.as_str(), "a b", "../x"] {
            let c = config(&[("PRLX_SESSION", raw)]);
            assert_eq!(
                prlx_session::check_session_name(&c.session),
                Ok(()),
                "{raw}"
            );
            assert_eq!(c.warnings.len(), 1, "{raw}: {:?}", c.warnings);
            assert!(
                c.warnings[0].starts_with("PRLX_SESSION: session name"),
                "{:?}",
                c.warnings
            );
        }
        let c = config(&[("PRLX_SESSION", "run-a.2")]);
        assert_eq!(c.session, "run-a.2");
        assert!(c.warnings.is_empty());
        assert_eq!(
            prlx_session::check_session_name(&config(&[]).session),
            Ok(())
        );
    }

    #[test]
    fn globs() {
        assert!(glob_match("*", ""));
        assert!(glob_match("a*c", "abbbc"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("*_Z*reduce*", "_Z6reducePfi"));
        assert!(!glob_match("abc", "abcd"));
        assert!(glob_match("a*b*c", "aXbYbZc"));
        // Non-ASCII names: `?` is one character, not one byte.
        assert!(glob_match("k?rnel*", "kérnel_f"));
        assert!(!glob_match("k??rnel*", "kérnel_f"));
    }

    #[test]
    fn each_rank_of_a_job_gets_its_own_session_named_alike() {
        let c = config(&[("PRLX_SESSION", "train"), ("OMPI_COMM_WORLD_RANK", "3")]);
        assert_eq!(c.session, "train.rank3");
        assert_eq!((c.rank, c.job.as_deref()), (Some(3), Some("train")));
        let c = config(&[("SLURM_PROCID", "0"), ("SLURM_JOB_ID", "77")]);
        assert!(c.session.ends_with("-77.rank0"), "{}", c.session);
        let c = config(&[("PRLX_SESSION", "solo")]);
        assert_eq!((c.session.as_str(), c.rank), ("solo", None));
    }
}
