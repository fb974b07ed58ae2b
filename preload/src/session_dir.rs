//! Session directories the shim writes itself, safe on a shared machine.
//!
//! The default root, `/tmp/prlx-<uid>/sessions` (or
//! `$XDG_RUNTIME_DIR/prlx/sessions`), sits where other users can create
//! names first. So every level the shim owns is created with `mkdirat`
//! (mode 0700) and opened with `openat(O_NOFOLLOW | O_DIRECTORY)` from the
//! level above; the opened directory must be owned by us and writable by
//! no one else, or the shim refuses it (one warning; the application runs
//! on unrecorded). Files are then written relative to the session
//! directory's descriptor, so swapping a path component for a symlink
//! after the check redirects nothing.

use crate::config::Config;
use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// An open, verified session directory.
pub struct SessionDir {
    fd: OwnedFd,
    /// For messages only: every access goes through `fd`.
    pub path: PathBuf,
}

impl SessionDir {
    /// Creates a fresh session directory for `session` (`session.N` when a
    /// run already used the name) under the configured or default root.
    pub fn create(config: &Config, session: &str) -> Result<SessionDir, String> {
        let root = open_root(config)?;
        for n in 0..1000 {
            let name = if n == 0 {
                session.to_owned()
            } else {
                format!("{session}.{n}")
            };
            let c_name = c_component(&name)?;
            // SAFETY: `root.fd` is an open directory and `c_name` a NUL-terminated component.
            if unsafe { libc::mkdirat(root.fd.as_raw_fd(), c_name.as_ptr(), 0o700) } != 0 {
                let err = std::io::Error::last_os_error();
                if err.kind() == std::io::ErrorKind::AlreadyExists {
                    continue;
                }
                return Err(format!(
                    "cannot create {}: {err}",
                    root.path.join(&name).display()
                ));
            }
            return open_verified(&root, &name);
        }
        Err(format!(
            "no free session directory name for {session:?} in {}",
            root.path.display()
        ))
    }

    /// The name this run's directory got (`session` or `session.N`).
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Writes `name` inside the directory crash-safely: `<name>.tmp`
    /// (never following a link), fsync, rename into place.
    pub fn write_atomically(&self, name: &str, bytes: &[u8]) -> Result<(), String> {
        let tmp_name = format!("{name}.tmp");
        let (c_name, c_tmp) = (c_component(name)?, c_component(&tmp_name)?);
        let shown = |n: &str| self.path.join(n).display().to_string();
        // SAFETY: the directory descriptor is open and `c_tmp` is NUL-terminated.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c_tmp.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o600 as libc::c_uint,
            )
        };
        if fd < 0 {
            let err = std::io::Error::last_os_error();
            return Err(format!("{}: cannot create: {err}", shown(&tmp_name)));
        }
        // SAFETY: `fd` was just opened and nothing else owns it.
        let mut file = unsafe { File::from_raw_fd(fd) };
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| format!("{}: cannot write: {e}", shown(&tmp_name)))?;
        drop(file);
        let dir = self.fd.as_raw_fd();
        // SAFETY: both names are NUL-terminated components of the open directory.
        if unsafe { libc::renameat(dir, c_tmp.as_ptr(), dir, c_name.as_ptr()) } != 0 {
            let err = std::io::Error::last_os_error();
            return Err(format!("{}: cannot rename into place: {err}", shown(name)));
        }
        Ok(())
    }
}

/// The directory session directories go in.
fn open_root(config: &Config) -> Result<SessionDir, String> {
    if let Some(dir) = &config.trace_dir {
        // The user named it: create it if need be and take it as it is
        // (a team's shared directory is fine); the session directory made
        // inside is still ours alone and checked.
        create_dir_all(dir)?;
        return open_dir(dir);
    }
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let tmp = || open_levels(Path::new("/tmp"), &[&format!("prlx-{uid}"), "sessions"]);
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        // A runtime directory that is gone or not ours (an environment
        // carried over by su or sudo) leaves /tmp, checked the same way.
        Some(runtime) => open_levels(Path::new(&runtime), &["prlx", "sessions"])
            .or_else(|xdg| tmp().map_err(|e| format!("{xdg}; {e}"))),
        None => tmp(),
    }
}

/// `base/levels…`, each level created (0700) if missing and checked.
fn open_levels(base: &Path, levels: &[&str]) -> Result<SessionDir, String> {
    let mut dir = open_dir(base)?;
    for level in levels {
        let c_level = c_component(level)?;
        // SAFETY: `dir.fd` is an open directory and `c_level` a NUL-terminated component.
        if unsafe { libc::mkdirat(dir.fd.as_raw_fd(), c_level.as_ptr(), 0o700) } != 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(format!(
                    "cannot create {}: {err}",
                    dir.path.join(level).display()
                ));
            }
        }
        dir = open_verified(&dir, level)?;
    }
    Ok(dir)
}

/// Opens `name` inside `parent` without following a link and checks that
/// it is a directory owned by us that no one else may write.
fn open_verified(parent: &SessionDir, name: &str) -> Result<SessionDir, String> {
    let path = parent.path.join(name);
    let c_name = c_component(name)?;
    // SAFETY: `parent.fd` is an open directory and `c_name` a NUL-terminated component.
    let fd = unsafe {
        libc::openat(
            parent.fd.as_raw_fd(),
            c_name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        let why = match err.raw_os_error() {
            // O_DIRECTORY | O_NOFOLLOW says ENOTDIR or ELOOP for a link: name it.
            Some(libc::ELOOP | libc::ENOTDIR) if is_symlink(parent, &c_name) => {
                "is a symbolic link".to_owned()
            }
            Some(libc::ENOTDIR) => "is not a directory".to_owned(),
            _ => format!("cannot be opened: {err}"),
        };
        return Err(unsafe_dir(&path, &why));
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: an all-zero `stat` is a valid value for fstat to overwrite.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open and `stat` is writable.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) } != 0 {
        let err = std::io::Error::last_os_error();
        return Err(format!("cannot inspect {}: {err}", path.display()));
    }
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    if stat.st_uid != me {
        return Err(unsafe_dir(
            &path,
            &format!("is owned by uid {}, not by you (uid {me})", stat.st_uid),
        ));
    }
    let mode = stat.st_mode & 0o7777;
    if mode & 0o022 != 0 {
        return Err(unsafe_dir(
            &path,
            &format!("is writable by other users (mode {mode:04o}; make it 0700)"),
        ));
    }
    Ok(SessionDir { fd, path })
}

fn is_symlink(parent: &SessionDir, name: &CString) -> bool {
    // SAFETY: an all-zero `stat` is a valid value for fstatat to overwrite.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open, `name` NUL-terminated, `stat` writable.
    let ok = unsafe {
        libc::fstatat(
            parent.fd.as_raw_fd(),
            name.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    } == 0;
    ok && stat.st_mode & libc::S_IFMT == libc::S_IFLNK
}

fn unsafe_dir(path: &Path, why: &str) -> String {
    format!(
        "{} {why}: refusing to write traces there (set PRLX_TRACE_DIR to a directory of your own)",
        path.display()
    )
}

fn open_dir(path: &Path) -> Result<SessionDir, String> {
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let is_dir = file.metadata().map(|m| m.is_dir()).unwrap_or(false);
    if !is_dir {
        return Err(format!("{} is not a directory", path.display()));
    }
    Ok(SessionDir {
        fd: OwnedFd::from(file),
        path: path.to_path_buf(),
    })
}

fn create_dir_all(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// One path component as a C string; names with `/` or NUL never get here
/// (session names and file names are checked), but say so if they do.
fn c_component(name: &str) -> Result<CString, String> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(format!("{name:?} is not a single file name"));
    }
    CString::new(name).map_err(|_| format!("{name:?} holds a NUL byte"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn config_in(root: &Path) -> Config {
        let root = root.to_string_lossy().into_owned();
        Config::from_lookup(|k| (k == "PRLX_TRACE_DIR").then(|| root.clone()))
    }

    #[test]
    fn session_dirs_are_private_and_unique() {
        let root = tempfile::tempdir().unwrap();
        let config = config_in(root.path());
        let a = SessionDir::create(&config, "run").unwrap();
        let b = SessionDir::create(&config, "run").unwrap();
        assert_eq!(a.name(), "run");
        assert_eq!(b.name(), "run.1");
        let mode = std::fs::metadata(&a.path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        a.write_atomically("x.json", b"{}").unwrap();
        assert_eq!(std::fs::read(a.path.join("x.json")).unwrap(), b"{}");
        assert!(!a.path.join("x.json.tmp").exists());
        assert!(a.write_atomically("../escape", b"").is_err());
    }

    #[test]
    fn files_follow_the_directory_not_its_path() {
        // A session directory moved away and replaced by a link to a place
        // another user reads: later files still land in the real directory.
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let dir = SessionDir::create(&config_in(root.path()), "run").unwrap();
        let moved = root.path().join("moved");
        std::fs::rename(&dir.path, &moved).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), &dir.path).unwrap();
        dir.write_atomically("session.json", b"secret").unwrap();
        assert_eq!(
            std::fs::read(moved.join("session.json")).unwrap(),
            b"secret"
        );
        assert!(!elsewhere.path().join("session.json").exists());
    }

    #[test]
    fn default_levels_are_created_private_and_reused() {
        let base = tempfile::tempdir().unwrap();
        let dir = open_levels(base.path(), &["prlx-7", "sessions"]).unwrap();
        assert_eq!(dir.path, base.path().join("prlx-7/sessions"));
        for level in ["prlx-7", "prlx-7/sessions"] {
            let mode = std::fs::metadata(base.path().join(level))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700, "{level}");
        }
        assert!(open_levels(base.path(), &["prlx-7", "sessions"]).is_ok());
        // A planted first level stops it, naming the level.
        std::fs::set_permissions(
            base.path().join("prlx-7"),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
        let err = open_levels(base.path(), &["prlx-7", "sessions"])
            .err()
            .unwrap();
        assert!(err.contains("prlx-7 is writable by other users"), "{err}");
        assert!(open_levels(&base.path().join("missing"), &["x"]).is_err());
    }

    #[test]
    fn links_and_open_levels_are_refused() {
        let base = tempfile::tempdir().unwrap();
        let parent = open_dir(base.path()).unwrap();
        let target = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(target.path(), base.path().join("link")).unwrap();
        let err = open_verified(&parent, "link").err().unwrap();
        assert!(
            err.contains("symbolic link") && err.contains("refusing"),
            "{err}"
        );
        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = open_verified(&parent, "open").err().unwrap();
        assert!(err.contains("mode 0777"), "{err}");
        std::fs::write(base.path().join("file"), b"").unwrap();
        let err = open_verified(&parent, "file").err().unwrap();
        assert!(err.contains("not a directory"), "{err}");
        std::fs::create_dir(base.path().join("mine")).unwrap();
        assert!(open_verified(&parent, "mine").is_ok());
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            // Pre-created for us by someone else (here: nobody).
            let theirs = base.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            let err = open_verified(&parent, "theirs").err().unwrap();
            assert!(err.contains("owned by uid 65534"), "{err}");
        } else {
            eprintln!("not checked: a directory owned by another uid (needs root to chown)");
        }
    }
}
