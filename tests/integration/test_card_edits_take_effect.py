"""A card edit saved with `toolroute cards edit` changes what `toolroute route` returns, in a new
process too, and a rollback restores it (issues 19 and 22: the effective catalogue everywhere)."""

import json
import os
import subprocess
import sys

from toolroute.config import ROOT, toolcards_dir

QUERY = "암보험 보험료 얼마예요"


def _cli(*args, env):
    result = subprocess.run([sys.executable, "-m", "toolroute.cli", *args], capture_output=True, text=True,
                            cwd=ROOT, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def _ranked(env):
    return [t["name"] for t in json.loads(_cli("route", QUERY, "--json", "--arm", "dense", env=env))["tools"]]


def _top1(env):
    return _ranked(env)[0]


def test_an_edit_reaches_the_router_in_new_processes_and_a_rollback_undoes_it(tmp_path):
    env = {**os.environ, "TOOLROUTE_CARDSTORE": str(tmp_path / "store")}
    before, target = _ranked(env)[:2]  # the runner-up gets the query as examples and should win
    catalog = ["--catalog", str(toolcards_dir("insurance"))]
    _cli("cards", "edit", target, "--expect-version", "0", "--add-example", QUERY, "--add-example",
         "암보험 보험료 얼마예요 알려줘", "-m", "test", *catalog, env=env)
    assert _top1(env) == target  # a new process routes with the edited card
    assert _top1(env) == target  # and so does the next one (the edit is stored, not in memory)
    from toolroute_lab.run.pipeline import card_edit_versions

    os.environ["TOOLROUTE_CARDSTORE"], saved = env["TOOLROUTE_CARDSTORE"], os.environ.get("TOOLROUTE_CARDSTORE")
    try:
        assert card_edit_versions()["insurance"] == 1  # what a run's manifest records
    finally:
        os.environ["TOOLROUTE_CARDSTORE"] = saved
    _cli("cards", "rollback", "0", *catalog, env=env)
    assert _top1(env) == before
