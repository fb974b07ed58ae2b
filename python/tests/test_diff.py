"""prlx.diff: the results of prlxctl diff --json, planted divergences, options, errors."""

import json
import shutil
import subprocess

import pytest

import prlx
from conftest import prlxctl


def test_example_runs_diverge_at_the_clamp(run_a, run_b, sites):
    r = prlx.diff(run_a, run_b, map=sites)
    assert r.status == "diverged" and r.diverged and not r.identical
    assert r.kernel == "reduce_clamped"
    assert r.total_divergences == 4
    assert r.breakdown == {"ActiveMask": 0, "Branch": 1, "ExtraEvents": 3, "Path": 0, "Value": 0}
    first = r.first_divergence
    assert first.kind == "Branch"
    assert first.warp_idx == 13 and tuple(first.block) == (3, 0, 0)
    assert first.event_idx == 6
    assert first.site_id == 0xCCE6A854
    assert (first.branch_dir_a, first.branch_dir_b) == (0, 1)
    assert first.source_location == "reduce.cu:16:15"
    assert json.loads(r.to_json()) == r.to_dict()


def test_a_trace_against_itself_is_identical(run_a):
    r = prlx.diff(run_a, run_a)
    assert r.status == "identical" and r.total_divergences == 0
    assert r.first_divergence is None and r.divergences == []


def _plant(tmp_path, run_a, warp, kind):
    """Copies run_a, changes one event of `warp`; returns (path, event index, site)."""
    t = prlx.read_trace(run_a)
    w = t.warps[warp]
    branches = [i for i in range(w.num_events) if w.event(i).event_type == 0]
    i = branches[len(branches) // 2]
    ev = w.event(i)
    offset = 160 + warp * (16 + t.header.events_per_warp * 16) + 16 + i * 16
    data = bytearray(run_a.read_bytes())
    if kind == "Branch":
        data[offset + 5] ^= 1  # branch_dir
    else:
        mask = ev.active_mask ^ 0x80000000
        data[offset + 8 : offset + 12] = mask.to_bytes(4, "little")
    path = tmp_path / f"planted-{kind}.prlx"
    path.write_bytes(bytes(data))
    return path, i, ev.site_id


@pytest.mark.parametrize("kind", ["Branch", "ActiveMask"])
@pytest.mark.parametrize("warp", [0, 7, 15])
def test_planted_divergence_is_found_with_its_kind_and_warp(tmp_path, run_a, warp, kind):
    planted, event, site = _plant(tmp_path, run_a, warp, kind)
    r = prlx.diff(run_a, planted)
    assert r.total_divergences == 1, r.json
    d = r.first_divergence
    assert (d.kind, d.warp_idx, d.event_idx, d.site_id) == (kind, warp, event, site)
    assert r.divergences[0].data == d.data


def test_filters_and_limit(run_a, run_b, sites):
    assert prlx.diff(run_a, run_b, kinds="Branch").total_divergences == 1
    assert prlx.diff(run_a, run_b, kinds=["ExtraEvents"]).total_divergences == 3
    every = prlx.diff(run_a, run_b).divergences
    in_warp = [d.data for d in every if d.warp_idx == 13]
    assert len(in_warp) == 2
    assert [d.data for d in prlx.diff(run_a, run_b, warps=13).divergences] == in_warp
    in_low = [d.data for d in every if d.warp_idx <= 5]
    assert [d.data for d in prlx.diff(run_a, run_b, warps=range(0, 6)).divergences] == in_low
    in_block = [d.data for d in every if tuple(d.block) == (3, 0, 0)]
    assert [d.data for d in prlx.diff(run_a, run_b, blocks=[(3, 0, 0)]).divergences] == in_block
    assert [d.data for d in prlx.diff(run_a, run_b, blocks=3).divergences] == in_block
    assert prlx.diff(run_a, run_b, sites="0xcce6a854").total_divergences == 1
    assert prlx.diff(run_a, run_b, functions="reduce_*", map=sites).total_divergences == 4
    limited = prlx.diff(run_a, run_b, limit=1)
    assert len(limited.divergences) == 1 and limited.data["divergences_truncated"]
    assert limited.total_divergences == 4
    r = prlx.diff(run_a, run_b, classify=True, history=4)
    assert r.data["causes"] and "cause" in r.data["first_divergence"]


def test_bad_options_raise_option_error(run_a, run_b):
    with pytest.raises(prlx.OptionError, match="Bogus"):
        prlx.diff(run_a, run_b, kinds="Bogus")
    with pytest.raises(prlx.OptionError, match="4096"):
        prlx.diff(run_a, run_b, max_edits=5000)
    with pytest.raises(prlx.OptionError, match="map"):
        prlx.diff(run_a, run_b, functions="reduce_*")
    with pytest.raises(prlx.OptionError, match="backwards"):
        prlx.diff(run_a, run_b, warps=[(5, 2)])


def test_bad_inputs_raise_trace_error(tmp_path, run_a, corpus):
    with pytest.raises(prlx.TraceError, match="missing.prlx"):
        prlx.diff(run_a, tmp_path / "missing.prlx")
    with pytest.raises(prlx.TraceError, match="err-empty.bin"):
        prlx.diff(corpus / "err-empty.bin", run_a)
    bad_map = tmp_path / "sites.json"
    bad_map.write_text("[{")
    with pytest.raises(prlx.TraceError, match="sites.json"):
        prlx.diff(run_a, run_a, map=bad_map)


ARGS = [
    [],
    ["--values"],
    ["--remap"],
    ["--kind", "ExtraEvents"],
    ["--history", "4", "--classify"],
    ["-n", "2"],
]


@pytest.mark.parametrize("flags", ARGS)
def test_same_json_as_prlxctl(tmp_path, run_a, run_b, sites, flags):
    """Byte for byte the document `prlxctl diff --json` prints, for the same options."""
    binary = prlxctl()
    if binary is None:
        pytest.skip("no prlxctl binary (set PRLX_PRLXCTL)")
    a, b = tmp_path / "a.prlx", tmp_path / "b.prlx"
    shutil.copy(run_a, a)
    shutil.copy(run_b, b)
    cli = subprocess.run(
        [binary, "diff", str(a), str(b), "--map", str(sites), "--json", *flags],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    options = {
        "--values": {"values": True},
        "--remap": {"remap": True},
        "--kind": {"kinds": "ExtraEvents"},
        "--history": {"history": 4, "classify": True},
        "-n": {"limit": 2},
    }.get(flags[0] if flags else "", {})
    r = prlx.diff(str(a), str(b), map=str(sites), **options)
    assert r.json.strip() == cli.strip()
