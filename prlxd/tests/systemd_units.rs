//! The systemd units in `systemd/` pass `systemd-analyze verify` (with
//! ExecStart pointed at the prlxd just built, since verify checks it exists),
//! keep their hardening and resource limits, score a low exposure in
//! `systemd-analyze security --offline=true`, and leave `PrivateUsers=` off
//! in the system unit for the reason a test here demonstrates.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn units_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("systemd")
}

fn analyze() -> Option<PathBuf> {
    let found = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    if found.is_none() {
        let required = std::env::var("PRLX_REQUIRE_TOOLCHAIN").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "systemd-analyze not found (Debian package systemd); run scripts/setup.sh"
        );
        eprintln!(
            "skipped: systemd-analyze not found (Debian package systemd), run scripts/setup.sh"
        );
    }
    found
}

/// Copies `units` into a scratch directory with /usr/bin/prlxd replaced.
fn staged(units: &[&str], sub: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for unit in units {
        let text = std::fs::read_to_string(units_dir().join(sub).join(unit)).unwrap();
        assert!(
            text.contains("/usr/bin/prlxd") || unit.ends_with(".socket"),
            "{unit}"
        );
        let text = text.replace("/usr/bin/prlxd", env!("CARGO_BIN_EXE_prlxd"));
        std::fs::write(dir.path().join(unit), text).unwrap();
    }
    dir
}

fn verify(analyze: &Path, dir: &Path, units: &[&str], user: bool) {
    let mut command = Command::new(analyze);
    let runtime = tempfile::tempdir().unwrap();
    if user {
        // The user manager needs a runtime directory to resolve %t.
        command.arg("--user").env("XDG_RUNTIME_DIR", runtime.path());
    }
    command
        .arg("verify")
        .args(units.iter().map(|u| dir.join(u)));
    // Units refer to each other by name: let verify find them beside each other.
    command.env("SYSTEMD_UNIT_PATH", format!("{}:", dir.display()));
    let out = command.output().expect("run systemd-analyze");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // verify prints problems as warnings even when it exits 0; ours must be clean.
    let problems: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        // Containers without a running systemd can't check these; they say so.
        .filter(|l| {
            !l.contains("Failed to connect to")
                && !l.contains("System has not been booted with systemd")
        })
        .collect();
    assert!(
        out.status.success() && problems.is_empty(),
        "systemd-analyze verify {units:?}:\n{stderr}"
    );
}

#[test]
fn system_units_verify() {
    let Some(analyze) = analyze() else { return };
    let units = ["prlxd.socket", "prlxd.service"];
    let dir = staged(&units, "");
    verify(&analyze, dir.path(), &units, false);
}

#[test]
fn user_units_verify() {
    let Some(analyze) = analyze() else { return };
    let units = ["prlxd.socket", "prlxd.service"];
    let dir = staged(&units, "user");
    verify(&analyze, dir.path(), &units, true);
}

fn assert_sets(unit: &str, settings: &[&str]) {
    let text = std::fs::read_to_string(units_dir().join(unit)).unwrap();
    for setting in settings {
        assert!(
            text.lines().any(|l| l == *setting),
            "{unit} lacks {setting}"
        );
    }
}

/// Keys the unit sets at all (resource directives whose values may change).
fn assert_sets_keys(unit: &str, keys: &[&str]) {
    let text = std::fs::read_to_string(units_dir().join(unit)).unwrap();
    for key in keys {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{key}="))),
            "{unit} sets no {key}="
        );
    }
}

const RESOURCE_KEYS: [&str; 6] = [
    "LimitNOFILE",
    "MemoryHigh",
    "MemoryMax",
    "TasksMax",
    "CPUWeight",
    "IOWeight",
];

#[test]
fn service_is_hardened() {
    assert_sets(
        "prlxd.service",
        &[
            "ProtectSystem=strict",
            "NoNewPrivileges=yes",
            "StateDirectory=prlx",
            "RuntimeDirectory=prlx",
            "RestrictAddressFamilies=AF_UNIX",
            "PrivateNetwork=yes",
            "User=prlx",
            "ProcSubset=pid",
            "RemoveIPC=yes",
            "DevicePolicy=closed",
            "IPAddressDeny=any",
            "SystemCallErrorNumber=EPERM",
            "CapabilityBoundingSet=",
        ],
    );
    assert_sets_keys("prlxd.service", &RESOURCE_KEYS);
    let text = std::fs::read_to_string(units_dir().join("prlxd.service")).unwrap();
    assert!(
        !text.lines().any(|l| l.starts_with("PrivateUsers=")),
        "the system unit must not set PrivateUsers= (see private_users_would_hide_every_peers_uid)"
    );
    let sysusers = std::fs::read_to_string(units_dir().join("prlx.sysusers.conf")).unwrap();
    assert!(
        sysusers.lines().any(|l| l.starts_with("u prlx ")),
        "{sysusers}"
    );
}

#[test]
fn user_service_is_hardened() {
    assert_sets(
        "user/prlxd.service",
        &[
            "NoNewPrivileges=yes",
            "PrivateUsers=yes",
            "ProtectSystem=strict",
            "PrivateTmp=yes",
            "PrivateNetwork=yes",
            "RestrictAddressFamilies=AF_UNIX",
            "SystemCallFilter=@system-service",
            "SystemCallErrorNumber=EPERM",
            "MemoryDenyWriteExecute=yes",
            "ProcSubset=pid",
        ],
    );
    assert_sets_keys("user/prlxd.service", &RESOURCE_KEYS);
}

/// `systemd-analyze security --offline=true`'s overall exposure of a staged unit.
fn exposure(analyze: &Path, dir: &Path, unit: &str, user: bool) -> f64 {
    let mut command = Command::new(analyze);
    let runtime = tempfile::tempdir().unwrap();
    if user {
        command.arg("--user").env("XDG_RUNTIME_DIR", runtime.path());
    }
    let out = command
        .args(["security", "--offline=true", "--no-pager"])
        .arg(dir.join(unit))
        .env("SYSTEMD_UNIT_PATH", format!("{}:", dir.display()))
        .output()
        .expect("run systemd-analyze security");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stdout
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .unwrap_or_else(|| panic!("no exposure level in:\n{stdout}\n{stderr}"));
    let after = line.rsplit(':').next().unwrap().trim();
    after
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("cannot read the exposure in {line:?}"))
}

/// The figures recorded in docs/prlxd.md ("systemd hardening"): 0.4 for the
/// system unit, 0.9 for the user unit (systemd 252; 10 = fully exposed).
#[test]
fn security_exposure_stays_low() {
    let Some(analyze) = analyze() else { return };
    let units = ["prlxd.socket", "prlxd.service"];
    let system = exposure(&analyze, staged(&units, "").path(), "prlxd.service", false);
    let user = exposure(
        &analyze,
        staged(&units, "user").path(),
        "prlxd.service",
        true,
    );
    eprintln!("exposure: system unit {system}, user unit {user}");
    assert!(system <= 1.0, "system unit exposure {system} (was 0.4)");
    assert!(user <= 1.5, "user unit exposure {user} (was 0.9)");
}

/// Why the system unit leaves `PrivateUsers=` off: in a private user
/// namespace (as `PrivateUsers=yes` makes, mapping only root and the service
/// user) SO_PEERCRED translates every other peer's uid to the overflow uid,
/// so a daemon there would file every user's sessions under 65534. Runs
/// prlxd in such a namespace (`unshare --user --map-root-user`) and asks
/// who a client of uid 1234 is, against a plain prlxd as the control.
#[test]
fn private_users_would_hide_every_peers_uid() {
    if let Ok(socket) = std::env::var("PRLX_PEER_UID_CHILD") {
        let client = prlx_proto::Client::connect(Path::new(&socket), "peer").unwrap();
        println!("daemon saw uid {}", client.uid);
        return;
    }
    let Some(users) = common::users::Users::new("private_users_would_hide_every_peers_uid") else {
        return;
    };
    if Command::new("unshare")
        .args(["--user", "--map-root-user", "true"])
        .status()
        .map_or(true, |s| !s.success())
    {
        eprintln!(
            "skipped: private_users_would_hide_every_peers_uid: no user namespaces here (unshare --user failed)"
        );
        return;
    }
    let seen = |daemon: &common::Daemon| {
        let out = users.run_as(
            1234,
            "private_users_would_hide_every_peers_uid",
            &[("PRLX_PEER_UID_CHILD", daemon.socket.to_str().unwrap())],
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let after = stdout
            .split("daemon saw uid ")
            .nth(1)
            .unwrap_or_else(|| panic!("{stdout}"));
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().unwrap()
    };
    let plain = common::Daemon::start("");
    assert_eq!(
        seen(&plain),
        1234,
        "control: a plain prlxd sees the real uid"
    );
    let namespaced =
        common::Daemon::start_wrapped("", &["unshare", "--user", "--map-root-user", "--"]);
    assert_eq!(
        seen(&namespaced),
        65534,
        "in a private user namespace the peer's uid is the overflow uid"
    );
}

/// Why the user unit may use `PrivateUsers=`: systemd maps the unit's own
/// user to itself there, and the 0600 socket admits only that user, whose
/// uid prlxd then sees unchanged. Runs prlxd as uid 41001 in a user
/// namespace mapping only that uid (`unshare --map-current-user`): a client
/// of uid 41001 is seen as 41001; any other peer (here uid 1234) as 65534.
#[test]
fn private_users_keep_the_users_own_uid() {
    const TEST: &str = "private_users_keep_the_users_own_uid";
    if let Ok(socket) = std::env::var("PRLX_PEER_UID_CHILD") {
        let client = prlx_proto::Client::connect(Path::new(&socket), "peer").unwrap();
        println!("daemon saw uid {}", client.uid);
        return;
    }
    let Some(users) = common::users::Users::new(TEST) else {
        return;
    };
    let owner = common::users::ALICE;
    if Command::new("setpriv")
        .arg(format!("--reuid={owner}"))
        .arg(format!("--regid={owner}"))
        .args(["--clear-groups", "unshare", "--map-current-user", "true"])
        .status()
        .map_or(true, |s| !s.success())
    {
        eprintln!("skipped: {TEST}: no unprivileged user namespaces here");
        return;
    }
    // The daemon's directory belongs to the user it runs as.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(dir.path(), Some(owner), Some(owner)).unwrap();
    let (reuid, regid) = (format!("--reuid={owner}"), format!("--regid={owner}"));
    let daemon = common::Daemon::start_in(
        dir,
        "",
        &[
            "setpriv",
            &reuid,
            &regid,
            "--clear-groups",
            "unshare",
            "--map-current-user",
            "--",
        ],
    );
    let seen = |uid: u32| {
        let out = users.run_as(
            uid,
            TEST,
            &[("PRLX_PEER_UID_CHILD", daemon.socket.to_str().unwrap())],
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let after = stdout
            .split("daemon saw uid ")
            .nth(1)
            .unwrap_or_else(|| panic!("{stdout}"));
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().unwrap()
    };
    assert_eq!(seen(owner), owner, "the unit's own user keeps its uid");
    assert_eq!(seen(1234), 65534, "anyone else is the overflow uid");
}
