//! Marks: named points and ranges the application puts between its launches
//! (`prlx.mark("step 3")`, `with prlx.session("warmup"):` in Python, which
//! call [`prlx_mark`] through ctypes when the shim is loaded).
//!
//! Marks are kept in memory and written as `session.json`'s `"marks"` array
//! each time the manifest is stored: `{"name", "kind", "time_ns",
//! "first_seq"}`, where `kind` is `point`, `begin` or `end` and `first_seq`
//! is the `seq` of the first launch recorded after the mark (the number of
//! launches whose `timestamp_ns` is earlier). A range is the launches from a
//! `begin`'s `first_seq` up to its `end`'s. Readers that do not know the
//! field ignore it; sessions stored in prlxd carry no marks.
//!
//! [`prlx_launch_site`] is the same road for the Python lines that launch a
//! kernel (`prlx.triton` calls it from Triton's launch hook): the frames are
//! put first in the next launch's `cpu_stack`, so `launched from` names the
//! Python line instead of the interpreter's C function.

use std::ffi::{CStr, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use prlx_session::LaunchRecord;

struct Mark {
    name: String,
    kind: &'static str,
    time_ns: u64,
}

static MARKS: Mutex<Vec<Mark>> = Mutex::new(Vec::new());

/// The Python stack (innermost first) seen just before a launch.
struct SiteNote {
    time_ns: u64,
    frames: Vec<(String, String, u32)>,
}

static SITES: Mutex<Vec<SiteNote>> = Mutex::new(Vec::new());

/// Notes kept at most (one per launch; later ones are not recorded).
const MAX_SITES: usize = 1 << 20;
/// Frames kept per note.
const MAX_FRAMES: usize = 16;

/// Longest mark name kept (longer ones are cut at a character boundary).
const MAX_NAME: usize = 256;

/// Records a mark now. `kind`: 0 point, 1 begin of a range, 2 end of one.
/// Returns 0, or -1 for a null or non-UTF-8 name or an unknown kind.
///
/// # Safety
/// `name` is null or a NUL-terminated string valid for the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prlx_mark(name: *const c_char, kind: c_int) -> c_int {
    let body = || {
        if name.is_null() {
            return -1;
        }
        // SAFETY: the caller passes a NUL-terminated string valid for the call.
        let Ok(text) = unsafe { CStr::from_ptr(name) }.to_str() else {
            return -1;
        };
        let kind = match kind {
            0 => "point",
            1 => "begin",
            2 => "end",
            _ => return -1,
        };
        let mut cut = text.len().min(MAX_NAME);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let mark = Mark {
            name: text[..cut].to_owned(),
            kind,
            time_ns: now_ns(),
        };
        MARKS.lock().unwrap_or_else(|p| p.into_inner()).push(mark);
        0
    };
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(-1)
}

/// Records the host-language stack of the launch about to be made, one
/// frame a line, innermost first: `function<TAB>file<TAB>line`. Returns 0,
/// or -1 for a null or non-UTF-8 text or when nothing parses.
///
/// # Safety
/// `frames` is null or a NUL-terminated string valid for the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prlx_launch_site(frames: *const c_char) -> c_int {
    let body = || {
        if frames.is_null() {
            return -1;
        }
        // SAFETY: the caller passes a NUL-terminated string valid for the call.
        let Ok(text) = unsafe { CStr::from_ptr(frames) }.to_str() else {
            return -1;
        };
        let parsed: Vec<(String, String, u32)> = text
            .lines()
            .filter_map(|l| {
                let mut parts = l.splitn(3, '\t');
                let function = parts.next()?;
                let file = parts.next()?;
                let line = parts.next()?.trim().parse().ok()?;
                Some((function.to_owned(), file.to_owned(), line))
            })
            .take(MAX_FRAMES)
            .collect();
        if parsed.is_empty() {
            return -1;
        }
        let mut sites = SITES.lock().unwrap_or_else(|p| p.into_inner());
        if sites.len() < MAX_SITES {
            sites.push(SiteNote {
                time_ns: now_ns(),
                frames: parsed,
            });
        }
        0
    };
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(-1)
}

fn now_ns() -> u64 {
    // The clock of the launch records' `timestamp_ns`.
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The manifest's JSON with the marks added (unchanged when there are none
/// or it does not parse as an object).
pub fn annotate(json: Vec<u8>, launches: &[LaunchRecord]) -> Vec<u8> {
    let marks = MARKS.lock().unwrap_or_else(|p| p.into_inner());
    let sites = SITES.lock().unwrap_or_else(|p| p.into_inner());
    if marks.is_empty() && sites.is_empty() {
        return json;
    }
    let Ok(serde_json::Value::Object(mut object)) =
        serde_json::from_slice::<serde_json::Value>(&json)
    else {
        return json;
    };
    if !sites.is_empty()
        && let Some(serde_json::Value::Array(records)) = object.get_mut("launches")
    {
        add_launch_sites(records, launches, &sites);
    }
    if marks.is_empty() {
        return to_json(object, json);
    }
    // (timestamp, the largest `seq + 1` of the launches up to it), by time:
    // one sort per store instead of a pass over every launch per mark.
    let mut by_time: Vec<(u64, u64)> = launches
        .iter()
        .map(|l| (l.timestamp_ns, l.seq + 1))
        .collect();
    by_time.sort_unstable();
    let mut running = 0;
    for entry in &mut by_time {
        running = running.max(entry.1);
        entry.1 = running;
    }
    let list: Vec<serde_json::Value> = marks
        .iter()
        .map(|m| {
            let earlier = by_time.partition_point(|&(t, _)| t < m.time_ns);
            let first_seq = earlier.checked_sub(1).map_or(0, |i| by_time[i].1);
            serde_json::json!({
                "name": m.name,
                "kind": m.kind,
                "time_ns": m.time_ns,
                "first_seq": first_seq,
            })
        })
        .collect();
    object.insert("marks".into(), serde_json::Value::Array(list));
    to_json(object, json)
}

fn to_json(object: serde_json::Map<String, serde_json::Value>, unchanged: Vec<u8>) -> Vec<u8> {
    match serde_json::to_vec_pretty(&serde_json::Value::Object(object)) {
        Ok(mut out) => {
            out.push(b'\n');
            out
        }
        Err(_) => unchanged,
    }
}

/// Puts each note's frames first in the `cpu_stack` of the first launch at
/// or after it (the latest note before a launch wins). `records` are the
/// JSON forms of `launches`, in the same order.
fn add_launch_sites(
    records: &mut [serde_json::Value],
    launches: &[LaunchRecord],
    sites: &[SiteNote],
) {
    let mut by_time: Vec<usize> = (0..launches.len().min(records.len())).collect();
    by_time.sort_by_key(|&i| launches[i].timestamp_ns);
    let mut chosen: Vec<Option<&SiteNote>> = vec![None; records.len()];
    for note in sites {
        let at = by_time.partition_point(|&i| launches[i].timestamp_ns < note.time_ns);
        if let Some(&i) = by_time.get(at) {
            // A launch follows its note within microseconds; a note with no
            // launch for a second was not followed by one that was recorded.
            if launches[i].timestamp_ns - note.time_ns < 1_000_000_000 {
                chosen[i] = Some(note);
            }
        }
    }
    for (record, note) in records.iter_mut().zip(chosen) {
        let Some(note) = note else { continue };
        let Some(object) = record.as_object_mut() else {
            continue;
        };
        let mut stack: Vec<serde_json::Value> = note
            .frames
            .iter()
            .map(|(function, file, line)| {
                serde_json::json!({"ip": "0x0", "function": function, "file": file, "line": line})
            })
            .collect();
        if let Some(serde_json::Value::Array(native)) = object.remove("cpu_stack") {
            stack.extend(native);
        }
        object.insert("cpu_stack".into(), serde_json::Value::Array(stack));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_land_in_the_manifest_with_the_next_launch_seq() {
        let launch = |seq: u64, t: u64| LaunchRecord {
            seq,
            timestamp_ns: t,
            ..LaunchRecord::default()
        };
        let before = annotate(b"{\"launches\":[]}".to_vec(), &[]);
        let name = c"step 3";
        // SAFETY: a literal C string.
        assert_eq!(unsafe { prlx_mark(name.as_ptr(), 1) }, 0);
        // SAFETY: null is refused before it is read.
        assert_eq!(unsafe { prlx_mark(std::ptr::null(), 0) }, -1);
        // SAFETY: a literal C string; kind 7 is refused.
        assert_eq!(unsafe { prlx_mark(name.as_ptr(), 7) }, -1);
        let t = MARKS.lock().unwrap()[0].time_ns;
        let out = annotate(
            b"{\"launches\":[]}".to_vec(),
            &[launch(0, t - 10), launch(1, t - 5), launch(2, t + 5)],
        );
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["marks"][0]["name"], "step 3");
        assert_eq!(v["marks"][0]["kind"], "begin");
        assert_eq!(v["marks"][0]["first_seq"], 2);
        // Launches from several threads: seq and time need not agree; the
        // mark follows the highest seq recorded before it.
        let out = annotate(
            b"{\"launches\":[]}".to_vec(),
            &[
                launch(1, t - 5),
                launch(4, t - 20),
                launch(2, t + 5),
                launch(3, t),
            ],
        );
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["marks"][0]["first_seq"], 5);
        // (Other tests may have noted launch sites: compare as JSON.)
        let before: serde_json::Value = serde_json::from_slice(&before).unwrap();
        assert_eq!(before, serde_json::json!({"launches": []}));
    }

    #[test]
    fn launch_sites_lead_the_next_launchs_stack() {
        let note = |t: u64, line: u32| SiteNote {
            time_ns: t,
            frames: vec![("<module>".into(), "train.py".into(), line)],
        };
        let launch = |seq: u64, t: u64| LaunchRecord {
            seq,
            timestamp_ns: t,
            ..LaunchRecord::default()
        };
        let launches = [launch(0, 100), launch(1, 200), launch(2, 300)];
        let mut records: Vec<serde_json::Value> = vec![
            serde_json::json!({"seq": 0, "cpu_stack": [{"ip": "0x1", "function": "native"}]}),
            serde_json::json!({"seq": 1}),
            serde_json::json!({"seq": 2}),
        ];
        // Two notes before launch 0 (the later wins), none before launch 1,
        // one before launch 2.
        add_launch_sites(
            &mut records,
            &launches,
            &[note(90, 7), note(95, 8), note(250, 9)],
        );
        assert_eq!(records[0]["cpu_stack"][0]["line"], 8);
        assert_eq!(records[0]["cpu_stack"][0]["file"], "train.py");
        assert_eq!(records[0]["cpu_stack"][1]["function"], "native");
        assert!(records[1].get("cpu_stack").is_none());
        assert_eq!(records[2]["cpu_stack"][0]["line"], 9);
        // The exported entry: malformed text is refused, a frame is kept.
        // SAFETY: literal C strings.
        assert_eq!(unsafe { prlx_launch_site(c"no tabs here".as_ptr()) }, -1);
        // SAFETY: a literal C string.
        assert_eq!(unsafe { prlx_launch_site(c"f\tx.py\t3\n".as_ptr()) }, 0);
        assert_eq!(SITES.lock().unwrap().last().unwrap().frames[0].2, 3);
    }
}
