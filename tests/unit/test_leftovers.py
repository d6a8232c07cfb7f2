"""A process a notebook leaves running (the embedded LLM server of a kernel killed by Ctrl-C) is stopped by the
run, not left to keep the cores busy."""

import subprocess
import sys
import time

import psutil
import pytest

from toolroute_lab.run import pipeline

ORPHAN = "import time; time.sleep(120)  # left behind"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
def test_an_orphan_of_a_dead_child_is_found_and_stopped():
    pipeline.adopt_orphans()
    before = pipeline.descendant_pids()
    # a child that starts a grandchild and exits at once: the grandchild's parent is gone, as the LLM server's
    # when its kernel is killed
    subprocess.run([sys.executable, "-c", f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {ORPHAN!r}])"],
                   check=True, timeout=30)
    deadline = time.monotonic() + 10
    while not any(ORPHAN in " ".join(p.info["cmdline"] or []) for p in psutil.process_iter(["cmdline", "ppid"])
                  if p.info["ppid"] == psutil.Process().pid):
        assert time.monotonic() < deadline, "the orphan was not re-parented to this process"
        time.sleep(0.05)
    stopped = pipeline.stop_leftovers(before, timeout=5)
    assert len(stopped) == 1 and "time.sleep(120)" in stopped[0]
    alive = [p.info for p in psutil.process_iter(["cmdline", "status"])
             if p.info["status"] != psutil.STATUS_ZOMBIE and ORPHAN in " ".join(p.info["cmdline"] or [])]
    assert alive == []


def test_processes_running_before_are_left_alone():
    keep = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        before = pipeline.descendant_pids()
        assert keep.pid in before and pipeline.stop_leftovers(before, timeout=1) == []
        assert keep.poll() is None
    finally:
        keep.kill()
        keep.wait()
