"""prlx.daemon against a real prlxd, and without one."""

import os
import subprocess
import time
from pathlib import Path

import pytest

import prlx
from conftest import ROOT


def test_no_daemon_is_a_daemon_error_naming_the_socket(tmp_path):
    socket = tmp_path / "nobody.sock"
    with pytest.raises(prlx.DaemonError, match="nobody.sock") as info:
        prlx.daemon.list_sessions(socket=socket)
    assert "prlxd" in str(info.value)
    with pytest.raises(prlx.DaemonError, match="nobody.sock"):
        prlx.daemon.show_session("a", socket=socket)
    with pytest.raises(prlx.OptionError, match="timeout"):
        prlx.daemon.list_sessions(socket=socket, timeout=0)


def prlxd_binary():
    path = os.environ.get("PRLX_PRLXD") or str(ROOT / "target" / "debug" / "prlxd")
    if os.access(path, os.X_OK):
        return path
    if os.environ.get("PRLX_REQUIRE_TOOLCHAIN") == "1":
        pytest.fail(f"no prlxd binary at {path} (set PRLX_PRLXD)")
    pytest.skip("no prlxd binary (set PRLX_PRLXD)")


@pytest.fixture
def daemon(tmp_path):
    socket = tmp_path / "prlxd.sock"
    proc = subprocess.Popen(
        [prlxd_binary(), "--socket", str(socket), "--state-dir", str(tmp_path / "state")],
        env={**os.environ, "PRLX_LOG": "warn"},
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                prlx.daemon.list_sessions(socket=socket, timeout=2)
                break
            except prlx.DaemonError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.05)
        yield socket
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_an_empty_daemon(daemon):
    assert prlx.daemon.list_sessions(socket=daemon) == []
    with pytest.raises(prlx.DaemonError, match="nothere"):
        prlx.daemon.show_session("nothere", socket=daemon)
