//! The standing reliability suite, multi-user half: several uids against
//! one daemon. The tests run as root (CI does) and play each user by
//! running this binary again under `setpriv` (`common::users`); the child
//! side of a test is chosen by `PRLX_ROLE`. Not root: each test says it is
//! skipped, by name.
//!
//! One user must not be able to read, name, guess or starve another's
//! sessions: isolation by name, path and job id, with no difference
//! between "exists but not yours" and "does not exist"; idle connections
//! of one user do not lock out another; a diff flood leaves a bystander
//! responsive; a full disk loses nothing acknowledged and the daemon
//! recovers once space is freed.

mod common;

use common::acked::{Acked, assert_served, sized_trace};
use common::users::{ALICE, BOB, Users};
use common::{Daemon, create, record, show, trace};
use prlx_proto::{Client, ErrorCode, Request, Response};
use prlx_tests::Rng;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn role() -> Option<String> {
    std::env::var("PRLX_ROLE").ok()
}

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| panic!("{key} unset"))
}

fn connect(who: &str) -> Client {
    let socket = PathBuf::from(env("PRLX_SOCKET_PATH"));
    let client = Client::connect_timeout(&socket, who, Some(Duration::from_secs(2)))
        .unwrap_or_else(|e| panic!("{who}: connect: {e}"));
    client.set_timeout(Some(Duration::from_secs(10))).unwrap();
    client
}

/// The value printed by a child as `KEY=value`.
fn printed(out: &std::process::Output, key: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let marker = format!("{key}=");
    let after = stdout
        .split(&marker)
        .nth(1)
        .unwrap_or_else(|| panic!("no {key} in:\n{stdout}"));
    after.lines().next().unwrap_or_default().trim().to_owned()
}

// ---------------------------------------------------------------- isolation

const ISOLATION: &str = "users_cannot_reach_or_detect_each_others_sessions_and_jobs";

/// Alice stores a session and queues a diff; Bob, by every name, path and
/// job id he can form, neither reads, changes nor learns anything of it —
/// the answer for Alice's real session is the answer for one that does not
/// exist — and his own session of the same name is simply his.
#[test]
fn users_cannot_reach_or_detect_each_others_sessions_and_jobs() {
    match role().as_deref() {
        Some("alice-setup") => return alice_setup(),
        Some("bob-probe") => return bob_probe(),
        Some("alice-check") => return alice_check(),
        _ => {}
    }
    let Some(users) = Users::new(ISOLATION) else {
        return;
    };
    let daemon = Daemon::start("");
    let socket = daemon.socket.to_str().unwrap().to_owned();
    let out = users.run_as(
        ALICE,
        ISOLATION,
        &[("PRLX_ROLE", "alice-setup"), ("PRLX_SOCKET_PATH", &socket)],
    );
    let job = printed(&out, "JOB");
    users.run_as(
        BOB,
        ISOLATION,
        &[
            ("PRLX_ROLE", "bob-probe"),
            ("PRLX_SOCKET_PATH", &socket),
            ("PRLX_ALICE_JOB", &job),
        ],
    );
    users.run_as(
        ALICE,
        ISOLATION,
        &[("PRLX_ROLE", "alice-check"), ("PRLX_SOCKET_PATH", &socket)],
    );
    // Root sees both users' sessions.
    let mut root = daemon.client();
    let Response::Sessions { sessions } = root.request(&Request::ListSessions).unwrap() else {
        panic!()
    };
    let owners: std::collections::BTreeSet<u32> = sessions.iter().map(|s| s.uid).collect();
    assert!(
        owners.contains(&ALICE) && owners.contains(&BOB),
        "{sessions:?}"
    );
}

fn alice_setup() {
    let mut alice = connect("alice");
    assert_eq!(alice.uid, ALICE);
    let secret = create(&mut alice, "secret", None);
    assert_eq!(secret, "secret");
    let sites = br#"{"version": 1, "sites": []}"#;
    alice
        .put_launch(&secret, &record("k", 0), &trace("k", 1), Some((9, sites)))
        .unwrap();
    let other = create(&mut alice, "secret-b", None);
    alice
        .put_launch(&other, &record("k", 0), &trace("k", 2), None)
        .unwrap();
    let Response::JobQueued { job, .. } = alice
        .request(&Request::Diff {
            a: secret.clone(),
            b: other,
            options: Default::default(),
        })
        .unwrap()
    else {
        panic!("diff not queued")
    };
    println!("JOB={job}");
}

/// Bob's requests about `name`: every way to read, change or use a session.
fn probes(name: &str) -> Vec<(&'static str, Request)> {
    vec![
        (
            "show",
            Request::ShowSession {
                session: name.into(),
            },
        ),
        (
            "show-page",
            Request::ShowSessionPage {
                session: name.into(),
                offset: 0,
            },
        ),
        (
            "rm",
            Request::DeleteSession {
                session: name.into(),
            },
        ),
        (
            "fetch",
            Request::FetchFile {
                session: name.into(),
                file: "000000-k.prlx".into(),
            },
        ),
        (
            "fetch-manifest",
            Request::FetchFile {
                session: name.into(),
                file: "session.json".into(),
            },
        ),
        (
            "diff",
            Request::Diff {
                a: name.into(),
                b: name.into(),
                options: Default::default(),
            },
        ),
        (
            "count-dropped",
            Request::CountDropped {
                session: name.into(),
                count: 1,
            },
        ),
        (
            "baseline",
            Request::CreateSession {
                name: "mine".into(),
                baseline: Some(name.into()),
                command: vec![],
                pid: 1,
            },
        ),
    ]
}

/// An error's code and message with the probed name taken out, so two
/// answers compare equal exactly when they reveal the same thing.
fn answer(client: &mut Client, request: &Request, name: &str) -> (Option<ErrorCode>, String) {
    match client.request(request) {
        Ok(response) => panic!("Bob's {request:?} succeeded: {response:?}"),
        Err(e) => (e.code(), e.to_string().replace(name, "<name>")),
    }
}

fn bob_probe() {
    let mut bob = connect("bob");
    assert_eq!(bob.uid, BOB);
    let Response::Sessions { sessions } = bob.request(&Request::ListSessions).unwrap() else {
        panic!()
    };
    assert!(sessions.is_empty(), "Bob lists {sessions:?}");
    // Alice's real names against names nobody has, in each form Bob can type.
    let alice = ALICE.to_string();
    let pairs = [
        ("secret".to_owned(), "nothere".to_owned()),
        (format!("{alice}/secret"), format!("{alice}/nothere")),
        (format!("{alice}/secret-b"), format!("{alice}/secret-c")),
        ("../secret".to_owned(), "../nothere".to_owned()),
        (format!("../{alice}/secret"), format!("../{alice}/nothere")),
    ];
    for (real, missing) in &pairs {
        for ((what, probe_real), (_, probe_missing)) in
            probes(real).into_iter().zip(probes(missing))
        {
            let a = answer(&mut bob, &probe_real, real);
            let b = answer(&mut bob, &probe_missing, missing);
            assert!(
                matches!(
                    a.0,
                    Some(ErrorCode::NotFound | ErrorCode::PermissionDenied | ErrorCode::Protocol)
                ),
                "{what} {real}: {a:?}"
            );
            assert_eq!(
                a, b,
                "Bob's {what} tells {real:?} (exists, Alice's) from {missing:?} (does not exist)"
            );
        }
        // Adding a launch to it.
        let err = bob
            .put_launch(real, &record("k", 7), &trace("k", 7), None)
            .unwrap_err();
        let err_missing = bob
            .put_launch(missing, &record("k", 7), &trace("k", 7), None)
            .unwrap_err();
        assert_eq!(
            (err.code(), err.to_string().replace(real.as_str(), "<name>")),
            (
                err_missing.code(),
                err_missing.to_string().replace(missing.as_str(), "<name>")
            ),
            "put_launch tells {real:?} from {missing:?}"
        );
    }
    // Alice's job, by id, against an id nobody has.
    let job: u64 = env("PRLX_ALICE_JOB").parse().unwrap();
    let job_requests = |job: u64| {
        [
            Request::JobStatus { job },
            Request::JobResult { job },
            Request::JobResultStream { job },
        ]
    };
    for (request, missing_request) in job_requests(job).into_iter().zip(job_requests(job + 1000)) {
        let real = answer(&mut bob, &request, &job.to_string());
        let missing = answer(&mut bob, &missing_request, &(job + 1000).to_string());
        assert_eq!(
            real, missing,
            "Bob's {request:?} tells Alice's job from none"
        );
    }
    // Bob's own "secret" is his, under the very name (no ".1" giving Alice away).
    let mine = create(&mut bob, "secret", None);
    assert_eq!(mine, "secret");
    bob.put_launch(&mine, &record("b", 0), &trace("b", 3), None)
        .unwrap();
    let (info, _) = show(&mut bob, "secret");
    assert_eq!((info.uid, info.launches), (BOB, 1));
}

fn alice_check() {
    let mut alice = connect("alice");
    let (info, manifest) = show(&mut alice, "secret");
    assert_eq!(info.launches, 1, "{info:?}");
    assert!(manifest.launches[0].site_map.is_some());
    let Response::Sessions { sessions } = alice.request(&Request::ListSessions).unwrap() else {
        panic!()
    };
    let names: Vec<&str> = sessions.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), 2, "Alice's sessions: {names:?}");
}

// ----------------------------------------------------------- fd exhaustion

const IDLE: &str = "idle_connections_of_one_user_do_not_lock_out_another";

/// Alice opens as many connections as the daemon will take (it runs with
/// 1024 descriptors; she tries 1500) and leaves them idle, some greeted,
/// some not; Bob still connects, says hello and stores a launch within 2 s.
#[test]
fn idle_connections_of_one_user_do_not_lock_out_another() {
    match role().as_deref() {
        Some("hog") => return hog(),
        Some("bystander") => return bystander(),
        _ => {}
    }
    let Some(users) = Users::new(IDLE) else {
        return;
    };
    let daemon = Daemon::start_wrapped("", &["prlimit", "--nofile=1024:1024", "--"]);
    let socket = daemon.socket.to_str().unwrap().to_owned();
    let signals = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(signals.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let ready = signals.path().join("ready");
    let done = signals.path().join("done");
    let mut hog = users
        .command(
            ALICE,
            IDLE,
            &[
                ("PRLX_ROLE", "hog"),
                ("PRLX_SOCKET_PATH", &socket),
                ("PRLX_READY", ready.to_str().unwrap()),
                ("PRLX_DONE", done.to_str().unwrap()),
            ],
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready.exists() {
        assert!(Instant::now() < deadline, "the hog never got ready");
        if let Some(status) = hog.try_wait().unwrap() {
            panic!("the hog exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let result = users
        .command(
            BOB,
            IDLE,
            &[("PRLX_ROLE", "bystander"), ("PRLX_SOCKET_PATH", &socket)],
        )
        .output()
        .unwrap();
    std::fs::write(&done, b"").unwrap();
    let hog_out = hog.wait_with_output().unwrap();
    let held = printed(&hog_out, "HELD");
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        result.status.success() && stdout.contains("1 passed"),
        "with Alice holding {held} idle connections, Bob was locked out:\n{stdout}\n{stderr}"
    );
}

/// Opens up to 1500 connections without blocking (stopping when the
/// daemon's backlog is full), says hello on every other one, holds them.
fn hog() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let socket = env("PRLX_SOCKET_PATH");
    let mut held = Vec::new();
    // SAFETY: getrlimit/setrlimit read and write the struct passed.
    let fds = unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur
    };
    for i in 0..1500.min(fds.saturating_sub(50)) {
        // SAFETY: plain socket(2); the result is checked.
        let fd = unsafe {
            libc::socket(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if fd < 0 {
            break;
        }
        // SAFETY: `fd` was just created and is owned here alone.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let std_stream = std::os::unix::net::UnixStream::from(fd);
        // SAFETY: an all-zero sockaddr_un is valid; the path is copied in below.
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (dst, src) in addr.sun_path.iter_mut().zip(socket.as_bytes()) {
            *dst = *src as libc::c_char;
        }
        use std::os::fd::AsRawFd;
        // SAFETY: `addr` is a valid sockaddr_un for the socket.
        let rc = unsafe {
            libc::connect(
                std_stream.as_raw_fd(),
                (&raw const addr).cast(),
                std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            break; // the backlog is full (EAGAIN): as many as it takes
        }
        if i % 2 == 0 {
            let hello = Request::Hello {
                client: "hog".into(),
                version: prlx_proto::PROTOCOL_VERSION,
            };
            let _ = prlx_proto::frame::write_frame(
                &mut &std_stream,
                prlx_proto::frame::FrameKind::Message,
                &hello.to_payload(),
            );
        }
        held.push(std_stream);
    }
    println!("HELD={}", held.len());
    std::fs::write(env("PRLX_READY"), b"").unwrap();
    let done = PathBuf::from(env("PRLX_DONE"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn bystander() {
    let started = Instant::now();
    let mut bob = connect("bob");
    let connected = started.elapsed();
    let session = create(&mut bob, "bystander", None);
    bob.put_launch(&session, &record("k", 0), &trace("k", 1), None)
        .unwrap();
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "Bob needed {connected:?} to connect and {took:?} to store one launch"
    );
}

// --------------------------------------------------------------- diff flood

const FLOOD: &str = "a_diff_flood_from_one_user_leaves_a_bystander_responsive";

/// A trace whose every warp is full of events that differ between salts,
/// so diffing two of them is real work.
fn busy_trace(kernel: &str, salt: u32) -> Vec<u8> {
    let mut builder = prlx_trace::TraceBuilder::new(kernel, [8, 1, 1], [128, 1, 1])
        .unwrap()
        .events_per_warp(1024);
    for warp in 0..builder.num_warps() {
        for i in 0..1024u32 {
            let event = prlx_trace::TraceEvent {
                site_id: i % 61,
                branch_dir: ((i.wrapping_mul(salt + 3) >> 3) & 1) as u8,
                active_mask: u32::MAX >> ((i ^ salt) % 7),
                value_a: i ^ salt,
                ..prlx_trace::TraceEvent::default()
            };
            builder.push_event(warp, event).unwrap();
        }
    }
    builder.to_bytes()
}

/// Root queues 40 diffs of two busy sessions (as many as its per-uid cap
/// takes); meanwhile Bob connects,
/// creates a session, stores launches and asks for status and his list,
/// each within 2 s, and the flood is still going when he is done.
#[test]
fn a_diff_flood_from_one_user_leaves_a_bystander_responsive() {
    if role().as_deref() == Some("bystander") {
        return flood_bystander();
    }
    let Some(users) = Users::new(FLOOD) else {
        return;
    };
    let daemon = Daemon::start("workers = 2\n");
    let mut root = daemon.client();
    let a = create(&mut root, "flood-a", None);
    let b = create(&mut root, "flood-b", None);
    for i in 0..12 {
        for (session, salt) in [(&a, i), (&b, i + 100)] {
            root.put_launch(session, &record("busy", i), &busy_trace("busy", salt), None)
                .unwrap();
        }
    }
    // 40 distinct diffs (no cache hits); a per-uid cap may refuse the tail.
    let mut queued = 0;
    for n in 0..40 {
        let options = prlx_proto::DiffOptions {
            max_edits: 256 + n,
            compare_values: n % 2 == 0,
            ..Default::default()
        };
        match root.request(&Request::Diff {
            a: a.clone(),
            b: b.clone(),
            options,
        }) {
            Ok(Response::JobQueued { .. }) => queued += 1,
            Ok(other) => panic!("{other:?}"),
            Err(e) => assert_eq!(e.code(), Some(ErrorCode::QuotaExceeded), "{e}"),
        }
    }
    assert!(queued >= 8, "only {queued} diffs queued");
    let socket = daemon.socket.to_str().unwrap().to_owned();
    users.run_as(
        BOB,
        FLOOD,
        &[("PRLX_ROLE", "bystander"), ("PRLX_SOCKET_PATH", &socket)],
    );
    let Response::Status { info } = root.request(&Request::Status).unwrap() else {
        panic!()
    };
    assert!(
        info.jobs_queued + info.jobs_running > 0,
        "the flood was over before Bob finished ({info:?}): make the diffs heavier"
    );
}

fn flood_bystander() {
    let mut worst = Duration::ZERO;
    let mut timed = |what: &str, f: &mut dyn FnMut()| {
        let started = Instant::now();
        f();
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(2),
            "during the diff flood, Bob's {what} took {took:?}"
        );
        worst = worst.max(took);
    };
    let mut bob = None;
    timed("connect", &mut || bob = Some(connect("bob")));
    let mut bob = bob.unwrap();
    let mut session = String::new();
    timed("create", &mut || {
        session = create(&mut bob, "during-flood", None)
    });
    for i in 0..5 {
        timed("launch", &mut || {
            bob.put_launch(
                &session,
                &record("k", i),
                &sized_trace("k", 4, 1024, i),
                None,
            )
            .unwrap();
        });
    }
    timed("status", &mut || {
        bob.request(&Request::Status).unwrap();
    });
    timed("list", &mut || {
        bob.request(&Request::ListSessions).unwrap();
    });
    println!("WORST={worst:?}");
}

// ---------------------------------------------------------------- disk full

const DISK_FULL: &str = "a_full_disk_loses_nothing_acknowledged_and_recovers";

/// A tmpfs mounted for the test, unmounted when dropped (after the daemon).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700")])
            .arg("tmpfs")
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// The state directory is an 8 MiB tmpfs. Root fills it with hard-to-
/// compress traces until the daemon refuses; Bob's launches then are either
/// acknowledged (and served) or refused with an error, never dropped
/// silently; after a restart on the full disk every acknowledged launch is
/// served, root deletes its junk, and Bob stores again.
#[test]
fn a_full_disk_loses_nothing_acknowledged_and_recovers() {
    if role().as_deref() == Some("bob") {
        return disk_full_bob();
    }
    let Some(users) = Users::new(DISK_FULL) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let Some(_tmpfs) = Tmpfs::mount(&dir.path().join("state"), "8m") else {
        eprintln!("skipped: {DISK_FULL}: cannot mount a tmpfs here (mount -t tmpfs failed)");
        return;
    };
    let mut daemon = Daemon::start_in(dir, "", &[]);
    let socket = daemon.socket.to_str().unwrap().to_owned();
    let mut root = daemon.client();
    let junk = create(&mut root, "junk", None);
    let mut rng = Rng::seeded(DISK_FULL, 0xd15c);
    let mut acked = Vec::new();
    let mut refusal = None;
    for i in 0..200u32 {
        let trace = noisy_trace(&mut rng, i);
        match root.put_launch(&junk, &record("noise", i), &trace, None) {
            Ok((seq, _)) => acked.push(Acked {
                session: junk.clone(),
                seq,
                kernel: "noise".into(),
                launch_index: i,
                trace,
                sites: None,
            }),
            Err(e) => {
                refusal = Some(e.to_string());
                break;
            }
        }
    }
    let refusal = refusal.expect("200 launches of noise fit in 8 MiB?");
    eprintln!("full after {} launches: {refusal}", acked.len());
    // Bob, on the full disk: acknowledged or refused, never silently lost.
    let out = users.run_as(
        BOB,
        DISK_FULL,
        &[("PRLX_ROLE", "bob"), ("PRLX_SOCKET_PATH", &socket)],
    );
    let bob_acked = printed(&out, "ACKED");
    assert_served(&mut root, &acked, "on the full disk");
    let check_bob = |root: &mut Client, when: &str| {
        let acked: Vec<u64> = bob_acked
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        if acked.is_empty() {
            return; // refused (said so, with a code): nothing to look for
        }
        let (info, manifest) = show(root, &format!("{BOB}/bob"));
        for seq in &acked {
            let launch = manifest.launches.iter().find(|l| l.seq == *seq);
            assert!(
                launch.is_some_and(|l| !l.incomplete && l.file.is_some()),
                "{when}: Bob's acknowledged launch {seq} is not served: {info:?}"
            );
        }
    };
    check_bob(&mut root, "on the full disk");
    // Restart on the full disk: everything acknowledged is served.
    let status = daemon.terminate();
    assert!(status.success(), "prlxd exited {status} on SIGTERM");
    daemon.spawn();
    let mut root = daemon.client();
    assert_served(&mut root, &acked, "after a restart on the full disk");
    check_bob(&mut root, "after a restart on the full disk");
    // Freeing space works, and then Bob stores again.
    root.request(&Request::DeleteSession {
        session: junk.clone(),
    })
    .expect("deleting the junk on a full disk");
    let out = users.run_as(
        BOB,
        DISK_FULL,
        &[
            ("PRLX_ROLE", "bob"),
            ("PRLX_SOCKET_PATH", &socket),
            ("PRLX_EXPECT_STORED", "1"),
        ],
    );
    assert!(!printed(&out, "ACKED").is_empty());
}

/// About 260 KiB of events with random values: zstd can't shrink it much.
fn noisy_trace(rng: &mut Rng, salt: u32) -> Vec<u8> {
    let mut builder = prlx_trace::TraceBuilder::new("noise", [4, 1, 1], [128, 1, 1])
        .unwrap()
        .events_per_warp(1024);
    for warp in 0..builder.num_warps() {
        for _ in 0..1024 {
            let event = prlx_trace::TraceEvent {
                site_id: rng.next() as u32 % 1000,
                branch_dir: (rng.next() & 1) as u8,
                active_mask: rng.next() as u32,
                value_a: rng.next() as u32 ^ salt,
                ..prlx_trace::TraceEvent::default()
            };
            builder.push_event(warp, event).unwrap();
        }
    }
    builder.to_bytes()
}

fn disk_full_bob() {
    let mut bob = connect("bob");
    let session = match bob.request(&Request::CreateSession {
        name: "bob".into(),
        baseline: None,
        command: vec![],
        pid: 1,
    }) {
        Ok(Response::SessionCreated { session }) => session,
        Ok(other) => panic!("{other:?}"),
        // The disk is full or the session exists (second run): use it.
        Err(e) => {
            println!("create: {e}");
            "bob".into()
        }
    };
    let mut acked = Vec::new();
    let expect_stored = std::env::var("PRLX_EXPECT_STORED").is_ok();
    for i in 0..3 {
        let index = if expect_stored { 100 + i } else { i };
        match bob.put_launch(&session, &record("k", index), &trace("k", index), None) {
            Ok((seq, _)) => acked.push(seq.to_string()),
            Err(e) => {
                assert!(e.code().is_some(), "Bob's launch: not a clear refusal: {e}");
                assert!(!expect_stored, "Bob's launch after space was freed: {e}");
                println!("refused: {e}");
            }
        }
    }
    println!("ACKED={}", acked.join(","));
}

// ---------------------------------------------------- the shim's fallback

const PLANTED: &str = "a_fallback_directory_planted_by_another_user_is_refused";

/// Bob creates Alice's fallback directory first (`/tmp/prlx-<alice>`, mode
/// 0777, its `sessions` a link into a directory he reads). Alice runs an
/// application under the shim with no daemon: it exits 0, the shim says
/// once that it refuses the directory, and Bob's directory stays empty.
/// Without the plant, the same run writes a session whose every level is
/// Alice's and 0700.
#[test]
fn a_fallback_directory_planted_by_another_user_is_refused() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Some(users) = Users::new(PLANTED) else {
        return;
    };
    drop(users);
    let Some(fx) = prlx_tests::TestApp::build("preload/tests/app", "capture_app.c", &["-pthread"])
    else {
        return;
    };
    // What Alice runs, where she can reach it.
    let share = tempfile::tempdir().unwrap();
    let copy = |from: &Path, name: &str| {
        let to = share.path().join(name);
        std::fs::copy(from, &to).unwrap();
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
        to
    };
    let app = copy(&fx.app, "app");
    let ptx = copy(&fx.ptx, "kernels.ptx");
    let libprlx = copy(&fx.built.libprlx, "libprlx.so");
    copy(&fx.built.lib_dir.join("libcuda.so"), "libcuda.so");
    prlx_tests::link_libcuda_soname(share.path());
    std::fs::set_permissions(share.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let run_as_alice = || {
        std::process::Command::new("setpriv")
            .arg(format!("--reuid={ALICE}"))
            .arg(format!("--regid={ALICE}"))
            .arg("--clear-groups")
            .arg(&app)
            .arg(&ptx)
            .args(["1", "2", "3"])
            .env_clear()
            .env("LD_PRELOAD", &libprlx)
            .env("LD_LIBRARY_PATH", share.path())
            .env("PRLX_SOCKET", "/nonexistent/prlxd.sock")
            .env("PRLX_SESSION", "alice-run")
            .output()
            .expect("run the app as Alice")
    };
    let fallback = PathBuf::from(format!("/tmp/prlx-{ALICE}"));
    let _ = std::fs::remove_dir_all(&fallback);
    struct Cleanup(PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _cleanup = Cleanup(fallback.clone());
    // Bob's plant.
    let loot = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(loot.path(), Some(BOB), Some(BOB)).unwrap();
    std::fs::set_permissions(loot.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::create_dir(&fallback).unwrap();
    std::os::unix::fs::chown(&fallback, Some(BOB), Some(BOB)).unwrap();
    std::fs::set_permissions(&fallback, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::symlink(loot.path(), fallback.join("sessions")).unwrap();
    std::os::unix::fs::lchown(fallback.join("sessions"), Some(BOB), Some(BOB)).unwrap();

    let out = run_as_alice();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the application failed:\n{stderr}");
    assert!(
        stderr.contains("refusing") && stderr.contains(&fallback.display().to_string()),
        "the shim did not say it refused {}:\n{stderr}",
        fallback.display()
    );
    assert_eq!(
        stderr.matches("refusing").count(),
        1,
        "said more than once:\n{stderr}"
    );
    let leaked: Vec<_> = std::fs::read_dir(loot.path()).unwrap().collect();
    assert!(leaked.is_empty(), "Bob got {leaked:?}");

    // Without the plant: a private session of Alice's.
    std::fs::remove_dir_all(&fallback).unwrap();
    let out = run_as_alice();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let session = fallback.join("sessions/alice-run");
    assert!(session.join("session.json").is_file(), "no session written");
    for level in [fallback.clone(), fallback.join("sessions"), session] {
        let meta = std::fs::symlink_metadata(&level).unwrap();
        assert!(meta.is_dir(), "{}", level.display());
        assert_eq!(
            (meta.uid(), meta.mode() & 0o777),
            (ALICE, 0o700),
            "{}",
            level.display()
        );
    }
}

// ------------------------------------------------------ status and job ids

const STATUS: &str = "status_and_job_ids_reveal_nothing_of_other_users";

/// Alice stores launches and queues diffs; Bob's `status` shows only his
/// own connections, jobs, launches and bytes (none of Alice's), and the
/// job id he is given does not follow Alice's (ids are not numbered
/// across users). Root's `status` shows everyone's totals.
#[test]
fn status_and_job_ids_reveal_nothing_of_other_users() {
    match role().as_deref() {
        Some("alice-busy") => return alice_busy(),
        Some("bob-status") => return bob_status(),
        _ => {}
    }
    let Some(users) = Users::new(STATUS) else {
        return;
    };
    let daemon = Daemon::start("");
    let socket = daemon.socket.to_str().unwrap().to_owned();
    let out = users.run_as(
        ALICE,
        STATUS,
        &[("PRLX_ROLE", "alice-busy"), ("PRLX_SOCKET_PATH", &socket)],
    );
    let jobs = printed(&out, "JOBS");
    users.run_as(
        BOB,
        STATUS,
        &[
            ("PRLX_ROLE", "bob-status"),
            ("PRLX_SOCKET_PATH", &socket),
            ("PRLX_ALICE_JOBS", &jobs),
        ],
    );
    let Response::Status { info } = daemon.client().request(&Request::Status).unwrap() else {
        panic!()
    };
    assert!(info.launches_ingested >= 4, "{info:?}");
    assert!(
        info.jobs_queued + info.jobs_running + info.jobs_done >= 3,
        "{info:?}"
    );
}

fn alice_busy() {
    let mut alice = connect("alice");
    let a = create(&mut alice, "a", None);
    let b = create(&mut alice, "b", None);
    for (i, session) in [&a, &b, &a, &b].into_iter().enumerate() {
        alice
            .put_launch(session, &record("k", i as u32), &trace("k", i as u32), None)
            .unwrap();
    }
    let mut jobs = Vec::new();
    for compare_values in [false, true] {
        let options = prlx_proto::DiffOptions {
            compare_values,
            ..Default::default()
        };
        let Response::JobQueued { job, .. } = alice
            .request(&Request::Diff {
                a: a.clone(),
                b: b.clone(),
                options,
            })
            .unwrap()
        else {
            panic!("diff not queued")
        };
        jobs.push(job.to_string());
    }
    println!("JOBS={}", jobs.join(","));
}

fn bob_status() {
    let alice_jobs: Vec<u64> = env("PRLX_ALICE_JOBS")
        .split(',')
        .map(|j| j.parse().unwrap())
        .collect();
    let mut bob = connect("bob");
    let Response::Status { info } = bob.request(&Request::Status).unwrap() else {
        panic!()
    };
    assert_eq!(
        (info.launches_ingested, info.bytes_ingested, info.sessions),
        (0, 0, 0),
        "Bob's status shows others' ingest: {info:?}"
    );
    assert_eq!(
        (info.jobs_queued, info.jobs_running, info.jobs_done),
        (0, 0, 0),
        "Bob's status shows others' jobs: {info:?}"
    );
    assert_eq!(
        info.connections, 1,
        "Bob's status counts others' connections: {info:?}"
    );
    let a = create(&mut bob, "a", None);
    bob.put_launch(&a, &record("k", 0), &trace("k", 0), None)
        .unwrap();
    let Response::JobQueued { job, .. } = bob
        .request(&Request::Diff {
            a: a.clone(),
            b: a,
            options: Default::default(),
        })
        .unwrap()
    else {
        panic!("diff not queued")
    };
    let last = *alice_jobs.iter().max().unwrap();
    assert!(
        !alice_jobs.contains(&job) && job != last + 1 && job != last + 2,
        "Bob's job id {job} follows Alice's {alice_jobs:?}: ids count other users' jobs"
    );
    let Response::Status { info } = bob.request(&Request::Status).unwrap() else {
        panic!()
    };
    assert_eq!(info.launches_ingested, 1, "{info:?}");
}
