//! The always-on shim at an application's launch rate (`cargo bench -p
//! prlx-preload --bench launch_rate`).
//!
//! `stub/launch_rate.c` calls `cuLaunchKernel` on a do-nothing
//! `libcuda.so.1` (`stub/libcuda_stub.c`) in a loop, spinning `WORK_NS` of
//! CPU time between launches as an application's own work (38 µs: about
//! 25,000 launches/s bare, a small PyTorch training loop's rate), and
//! reports launches/s and the launching thread's CPU time per launch (what
//! the shim adds on the application's thread, robust to a busy machine).
//! `PRLX_BENCH_LAUNCHES` and `PRLX_BENCH_ROUNDS` change the run's size. Configurations, interleaved round by round: bare; under
//! `LD_PRELOAD=libprlx.so` recording metadata to a session directory
//! (`PRLX_TRACE_DIR`); and sending to a prlxd started by the bench on a
//! temporary socket — each with the default stack sampling and with
//! `PRLX_STACKS=on`. Then the same flat out (no work between launches), where
//! the writer cannot keep up and back-pressure shows: the launches each
//! session recorded and counted as dropped are printed beside the rates.
//!
//! Needs cc (and builds libprlx and prlxd in the bench's profile, or takes
//! both from `PRLX_BENCH_BIN_DIR`); without cc it prints a skip line, or
//! fails under PRLX_REQUIRE_TOOLCHAIN=1. `PRLX_BENCH_BASELINE_DIR` names
//! the directory of another build's `libprlx.so` (an older commit's, say):
//! each shim configuration then also runs under it, interleaved round by
//! round with this build's, rows marked "baseline" (both send to the same
//! prlxd, this build's).

mod common;

use common::{median, run_ok};
use prlx_session::Manifest;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ROUNDS: usize = 3;
/// The application's own work per launch, in ns.
const WORK_NS: u64 = 38_000;
const PACED_LAUNCHES: u64 = 50_000;
const FLAT_OUT_LAUNCHES: u64 = 50_000;

#[derive(Clone, Copy, PartialEq)]
enum Target {
    Bare,
    Directory,
    Daemon,
}

#[derive(Clone, Copy)]
struct Case {
    target: Target,
    /// Under the baseline build's `libprlx.so` (`PRLX_BENCH_BASELINE_DIR`).
    baseline: bool,
    stacks: &'static str,
    work_ns: u64,
}

impl Case {
    fn label(&self) -> String {
        let target = match self.target {
            Target::Bare => return "bare (stub driver)".into(),
            Target::Directory => "to a directory",
            Target::Daemon => "to prlxd",
        };
        let build = if self.baseline { "baseline " } else { "" };
        format!("{build}shim, {target}, PRLX_STACKS={}", self.stacks)
    }
}

fn main() {
    let quick = common::quick();
    let Some(cc) = common::cc_or_skip() else {
        return;
    };
    let lib_dir = build_binaries();
    let baseline_dir = std::env::var_os("PRLX_BENCH_BASELINE_DIR").map(PathBuf::from);
    let scratch = tempfile::tempdir().unwrap();
    let (stub_dir, program) = common::build_stub_program(&cc, scratch.path(), "launch_rate");
    let state = scratch.path().join("prlxd-state");
    let socket = scratch.path().join("prlxd.sock");
    let mut daemon = Daemon::start(&lib_dir.join("prlxd"), &socket, &state);
    let setting = |name: &str, default: u64| -> u64 {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let rounds = if quick {
        1
    } else {
        setting("PRLX_BENCH_ROUNDS", ROUNDS as u64) as usize
    };
    let (paced, flat_out) = if quick {
        (2_000, 5_000)
    } else {
        (
            setting("PRLX_BENCH_LAUNCHES", PACED_LAUNCHES),
            setting("PRLX_BENCH_LAUNCHES", FLAT_OUT_LAUNCHES),
        )
    };
    let mut cases = Vec::new();
    for work_ns in [WORK_NS, 0] {
        cases.push(Case {
            target: Target::Bare,
            baseline: false,
            stacks: "",
            work_ns,
        });
        for target in [Target::Directory, Target::Daemon] {
            for stacks in ["sampled", "on"] {
                let builds: &[bool] = match baseline_dir {
                    Some(_) => &[true, false],
                    None => &[false],
                };
                for &baseline in builds {
                    cases.push(Case {
                        target,
                        baseline,
                        stacks,
                        work_ns,
                    });
                }
            }
        }
    }
    let env = Env {
        program: &program,
        stub_dir: &stub_dir,
        lib_dir: &lib_dir,
        baseline_dir: baseline_dir.as_deref(),
        traces: &scratch.path().join("traces"),
        socket: &socket,
        state: &state,
    };
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut walls: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut cpus: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut kept: Vec<(u64, u64)> = vec![(0, 0); cases.len()];
    for round in 0..rounds {
        for (i, case) in cases.iter().enumerate() {
            let launches = if case.work_ns > 0 { paced } else { flat_out };
            let session = format!("rate-{round}-{i}");
            let (rate, cpu, wall) = env.run(case, launches, &session);
            rates[i].push(rate);
            cpus[i].push(cpu);
            walls[i].push(wall);
            if case.target != Target::Bare {
                let manifest = env.manifest(case.target, &session);
                kept[i] = (manifest.launches.len() as u64, manifest.dropped_launches);
                assert_eq!(
                    kept[i].0 + kept[i].1,
                    launches,
                    "{}: every launch is recorded or counted as dropped",
                    case.label()
                );
            }
        }
    }
    daemon.stop();
    println!("\n## launch rate (median of {rounds} interleaved rounds; stub driver; launches/s)\n");
    println!(
        "| work per launch | configuration | launches/s | vs bare | app thread CPU ns/launch | added | process wall s | recorded | dropped |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    let (mut bare, mut bare_cpu) = (0.0, 0.0);
    for (i, case) in cases.iter().enumerate() {
        let rate = median(&mut rates[i]);
        let cpu = median(&mut cpus[i]);
        let wall = median(&mut walls[i]);
        if case.target == Target::Bare {
            (bare, bare_cpu) = (rate, cpu);
        }
        let (recorded, dropped) = if case.target == Target::Bare {
            ("".to_string(), "".to_string())
        } else {
            (kept[i].0.to_string(), kept[i].1.to_string())
        };
        println!(
            "| {} | {} | {rate:.0} | {:.3}x | {cpu:.0} | {:+.0} | {wall:.2} | {recorded} | {dropped} |",
            if case.work_ns > 0 {
                format!("{} µs", case.work_ns / 1000)
            } else {
                "none (flat out)".into()
            },
            case.label(),
            rate / bare,
            cpu - bare_cpu,
        );
    }
}

struct Env<'a> {
    program: &'a Path,
    stub_dir: &'a Path,
    lib_dir: &'a Path,
    baseline_dir: Option<&'a Path>,
    traces: &'a Path,
    socket: &'a Path,
    state: &'a Path,
}

impl Env<'_> {
    /// Runs the program once: (launches/s it reports, its thread's CPU ns
    /// per launch, the process's wall time in s, exit included).
    fn run(&self, case: &Case, launches: u64, session: &str) -> (f64, f64, f64) {
        let mut command = Command::new(self.program);
        command
            .arg(launches.to_string())
            .arg(case.work_ns.to_string())
            .env("LD_LIBRARY_PATH", self.stub_dir);
        common::without_shim_settings(&mut command);
        match case.target {
            Target::Bare => {}
            Target::Directory => {
                command.env("PRLX_TRACE_DIR", self.traces);
            }
            Target::Daemon => {
                command.env("PRLX_SOCKET", self.socket);
            }
        }
        if case.target != Target::Bare {
            let lib_dir = match (case.baseline, self.baseline_dir) {
                (true, Some(dir)) => dir,
                _ => self.lib_dir,
            };
            command
                .env("LD_PRELOAD", lib_dir.join("libprlx.so"))
                .env("PRLX_SESSION", session)
                .env("PRLX_STACKS", case.stacks);
        }
        let started = Instant::now();
        let out = run_ok(&mut command);
        let wall = started.elapsed().as_secs_f64();
        (
            common::reported(&out, "launches_per_s"),
            common::reported(&out, "cpu_ns_per_launch"),
            wall,
        )
    }

    fn manifest(&self, target: Target, session: &str) -> Manifest {
        let dir = match target {
            Target::Directory => self.traces.join(session),
            // SAFETY: getuid cannot fail.
            _ => self
                .state
                .join(unsafe { libc::getuid() }.to_string())
                .join(session),
        };
        // prlxd stores its manifest within a moment of the last launch.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match Manifest::load(&dir) {
                Ok(m) if target == Target::Directory || Instant::now() > deadline => return m,
                Ok(m) if m.launches.len() as u64 + m.dropped_launches > 0 => {
                    std::thread::sleep(Duration::from_millis(400));
                    return Manifest::load(&dir).unwrap_or(m);
                }
                Err(e) if Instant::now() > deadline => panic!("{e}"),
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

struct Daemon(Child);

impl Daemon {
    fn start(binary: &Path, socket: &Path, state: &Path) -> Daemon {
        let child = Command::new(binary)
            .arg("--socket")
            .arg(socket)
            .arg("--state-dir")
            .arg(state)
            .env("PRLX_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .expect("start prlxd");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "prlxd did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Daemon(child)
    }

    fn stop(&mut self) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Builds libprlx.so and prlxd into this bench's target dir, or takes them
/// from `PRLX_BENCH_BIN_DIR` (to measure another build, e.g. an older one).
fn build_binaries() -> PathBuf {
    if let Some(dir) = std::env::var_os("PRLX_BENCH_BIN_DIR") {
        return PathBuf::from(dir);
    }
    common::build_packages(&["prlx-preload", "prlxd"])
}
