//! The systemd units in `systemd/` pass `systemd-analyze verify` (with
//! ExecStart pointed at the prlxd just built, since verify checks it exists).

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

#[test]
fn service_is_hardened() {
    let text = std::fs::read_to_string(units_dir().join("prlxd.service")).unwrap();
    for setting in [
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "StateDirectory=prlx",
        "RuntimeDirectory=prlx",
        "RestrictAddressFamilies=AF_UNIX",
        "PrivateNetwork=yes",
        "User=prlx",
    ] {
        assert!(
            text.lines().any(|l| l == setting),
            "prlxd.service lacks {setting}"
        );
    }
    let sysusers = std::fs::read_to_string(units_dir().join("prlx.sysusers.conf")).unwrap();
    assert!(
        sysusers.lines().any(|l| l.starts_with("u prlx ")),
        "{sysusers}"
    );
}
