"""`make lab` starts for every user, root included (issue 25): the page answers and the project's
kernel is listed. Started on a free loopback port and stopped again."""

import json
import os
import signal
import subprocess
import time
import urllib.request


from conftest import LOOPBACK_ONLY, _free_port
from toolroute.config import ROOT

pytestmark = LOOPBACK_ONLY


def test_make_lab_answers_and_lists_the_toolroute_kernel(tmp_path):
    port = _free_port()
    args = f"--port {port} --ip 127.0.0.1 --no-browser --ServerApp.token=t --ServerApp.open_browser=False"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path), "LAB_ARGS": args}
    lab = subprocess.Popen(["make", "-s", "lab"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, start_new_session=True)
    try:
        deadline, kernels = time.monotonic() + 120, None
        while time.monotonic() < deadline and lab.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/kernelspecs?token=t", timeout=2) as r:
                    kernels = json.load(r)
                break
            except OSError:
                time.sleep(1)
        assert kernels is not None, f"no answer; make lab said: {lab.stdout.read() if lab.poll() is not None else ''}"
        assert "toolroute" in kernels["kernelspecs"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token=t", timeout=5) as page:
            assert page.status == 200 and "JupyterLab" in page.read().decode()
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        lab.wait(timeout=30)
