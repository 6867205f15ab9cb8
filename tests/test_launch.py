"""A launched hook imports site-packages only when needed and forge's modules from one cache
file, and neither changes what it imports: run for real, in a scratch copy of the plugin."""

import json
import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime import launch

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def plugin(tmp_path) -> Path:
    """A copy of the plugin's launcher and runtime, without any cache or .pyc."""
    root = tmp_path / "plugin"
    shutil.copytree(REPO / "forge_runtime", root / "forge_runtime",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "hooks", root / "hooks")
    return root


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    (root / ".git" / "forge-goals" / "n1").mkdir(parents=True)
    return root


def guard(plugin: Path, project: Path, command: str) -> dict | None:
    """The plugin's launcher's answer to one Bash call."""
    event = {"session_id": "s1", "hook_event_name": "PreToolUse", "cwd": str(project),
             "tool_name": "Bash", "tool_input": {"command": command}}
    done = subprocess.run([str(plugin / "hooks" / "forge-hook"), "PreToolUse"],
                          input=json.dumps(event), capture_output=True, text=True, timeout=60,
                          cwd=project, env={**os.environ, "FORGE_PYTHON": sys.executable,
                                            "CLAUDE_PROJECT_DIR": str(project)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def is_deny(reply: dict | None) -> bool:
    """The guard's own deny of deleting the ledger (not the launcher's deny of a crash)."""
    return reply is not None and "Bash deletes the goal ledger" in \
        reply["hookSpecificOutput"]["permissionDecisionReason"]


def imports(plugin: Path, project: Path, body: str = "") -> list[str]:
    """What one Bash hook, run as the launcher runs it, imported the ordinary way; `body`
    runs after it, in the same process."""
    code = (f"import io, json, sys; root = {str(plugin)!r}; sys.path.insert(0, root)\n"
            "from forge_runtime import launch\n"
            "cache = launch.install(root)\n"
            "from forge_runtime.hooks import dispatch\n"
            "event = {'session_id': 's1', 'hook_event_name': 'PreToolUse', 'tool_name': 'Bash',"
            f" 'cwd': {str(project)!r}, 'tool_input': {{'command': 'rm -rf .git/forge-goals'}}}}\n"
            "out = io.StringIO()\n"
            "raw = io.BytesIO(json.dumps(event).encode())\n"
            "dispatch.run(['PreToolUse'], raw, out, sys.stderr)\n"
            "assert 'deny' in out.getvalue(), out.getvalue()\n"
            "print(json.dumps(cache.unserved()))\n"
            f"{body}\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                          text=True, timeout=60, cwd=project,
                          env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[0]), done.stdout.splitlines()[1:]


def test_the_first_hook_learns_and_the_next_imports_every_forge_module_from_the_cache(
        plugin, project):
    cache = Path(launch.cache_path(str(plugin)))
    assert is_deny(guard(plugin, project, "rm -rf .git/forge-goals"))
    assert cache.is_file()
    unserved, _ = imports(plugin, project)
    assert unserved == []


def test_a_changed_source_is_imported_the_ordinary_way_and_then_learned(plugin, project):
    guard(plugin, project, "rm -rf .git/forge-goals")
    lexer = plugin / "forge_runtime" / "guard" / "shell" / "lexer.py"
    lexer.write_text(lexer.read_text() + "\nCHANGED = 'yes'\n")
    unserved, said = imports(plugin, project, "from forge_runtime.guard.shell import lexer\n"
                                              "print(lexer.CHANGED)")
    assert (unserved, said) == (["forge_runtime.guard.shell.lexer"], ["yes"])
    assert is_deny(guard(plugin, project, "rm -rf .git/forge-goals"))  # learns it again
    assert imports(plugin, project)[0] == []


def test_a_change_of_the_same_size_is_seen_too(plugin, project):
    """A `.pyc` keeps the source's mtime in whole seconds (so it is removed here, or the
    ordinary import would run it); the cache keeps nanoseconds."""
    guard(plugin, project, "rm -rf .git/forge-goals")
    for compiled in (plugin / "forge_runtime" / "protected" / "__pycache__").glob("paths.*.pyc"):
        compiled.unlink()
    paths = plugin / "forge_runtime" / "protected" / "paths.py"
    text = paths.read_text()
    assert '"forge-goals"' in text
    stat = paths.stat()
    paths.write_text(text.replace('"forge-goals"', '"forge-GOALS"', 1))
    os.utime(paths, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    unserved, said = imports(plugin, project, "from forge_runtime.protected import paths\n"
                                              "print('forge-GOALS' in paths.MARKERS)")
    assert "forge_runtime.protected.paths" in unserved and said == ["True"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other interpreter", "flipped"])
def test_a_damaged_cache_is_no_cache_and_heals(plugin, project, damage):
    guard(plugin, project, "git status")
    cache = Path(launch.cache_path(str(plugin)))
    data = cache.read_bytes()
    damaged = {"garbage": b"\x00garbage" * 20, "truncated": data[:len(data) // 2],
               "other interpreter": data.replace(launch.MAGIC, b"\x00\x00\r\n", 1),
               "flipped": data[:-200] + bytes(200)}[damage]
    cache.write_bytes(damaged)
    assert is_deny(guard(plugin, project, "rm -rf .git/forge-goals"))
    assert guard(plugin, project, "git status && ls -la") is None
    assert imports(plugin, project)[0] == []


def test_a_tree_where_the_cache_cannot_be_written_still_answers(plugin, project):
    shutil.rmtree(plugin / "forge_runtime" / "__pycache__", ignore_errors=True)
    (plugin / "forge_runtime" / "__pycache__").write_text("not a directory")
    assert is_deny(guard(plugin, project, "rm -rf .git/forge-goals"))
    assert guard(plugin, project, "git status") is None


def test_a_module_whose_source_is_gone_is_not_served_from_the_cache(plugin, project):
    guard(plugin, project, "rm -rf .git/forge-goals")
    (plugin / "forge_runtime" / "guard" / "shell" / "git.py").unlink()
    code = (f"import sys; root = {str(plugin)!r}; sys.path.insert(0, root)\n"
            "from forge_runtime import launch\n"
            "launch.install(root)\n"
            "try:\n    import forge_runtime.guard.shell.git\n"
            "except ImportError:\n    print('ImportError')\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.split() == ["ImportError"], done.stderr


def site_on_demand(body: str) -> list[str]:
    """Run `body` in a process started as a hook is (`-I -S`), once `install` ran."""
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
            "from forge_runtime import launch\n"
            f"launch.install({str(REPO)!r})\n"
            f"{body}\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_dependency_imports_in_a_hook_started_without_site():
    seen = site_on_demand("print('site' in sys.modules)\nimport yaml, jsonschema\n"
                          "print('site' in sys.modules, yaml.safe_load('a: 1') == {'a': 1})")
    assert seen == ["False", "True", "True"]


def test_site_runs_once_and_a_missing_module_still_fails_to_import():
    seen = site_on_demand(
        "for name in ('no_such_module_a', 'no_such_module_b'):\n"
        "    try:\n        __import__(name)\n"
        "    except ImportError:\n        print('ImportError')\n"
        "print(sum(getattr(f, '__name__', '') == 'SiteOnDemand' for f in sys.meta_path))")
    assert seen == ["ImportError", "ImportError", "0"]


def test_a_standard_library_probe_does_not_run_site_in_the_middle_of_an_import():
    """`ntpath` (imported by pathlib) tries `import nt`; site's `.pth` files must not run then."""
    seen = site_on_demand("import pathlib\nprint('site' in sys.modules)\n"
                          "import yaml\nprint('site' in sys.modules)")
    assert seen == ["False", "True"]


def test_a_moved_tree_starts_a_new_cache(plugin, project, tmp_path):
    """Its code objects name the files where they were compiled: tracebacks must not lie."""
    guard(plugin, project, "rm -rf .git/forge-goals")
    moved = tmp_path / "moved"
    plugin.rename(moved)
    assert "forge_runtime.guard.shell" in imports(moved, project)[0]
    assert is_deny(guard(moved, project, "rm -rf .git/forge-goals"))
    assert imports(moved, project)[0] == []


def test_ending_the_process_early_keeps_every_byte_of_output_and_the_status():
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
            "from forge_runtime.launch import end_process\n"
            "sys.stdout.write('x' * 1_000_000); sys.stderr.write('e' * 1000)\n"
            "end_process(5)\n"
            "print('not reached')")
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, len(done.stdout), done.stderr) == (5, 1_000_000, "e" * 1000)


def test_a_broken_pipe_is_reported_as_the_interpreter_always_has():
    """`forge list | head -1`: the reader is gone when the output is flushed; no traceback
    from forge, and the interpreter's own failing status."""
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
            "from forge_runtime.launch import end_process\n"
            "sys.stdout.write('x' * 4000)\n"  # held in the buffer until the flush
            "sys.stdin.read()\n"
            "raise SystemExit(end_process(0))")
    child = subprocess.Popen([sys.executable, "-I", "-c", code], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()
    child.stdin.close()
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=60) == 120
    assert "end_process" not in stderr and "BrokenPipeError" in stderr


def test_a_cache_planted_in_the_project_is_never_read(plugin, project):
    """A valid cache, serving code that would announce itself, where a hook's working
    directory would put it: the cache is found from the plugin's own path only."""
    planted = project / "forge_runtime" / "hooks" / "dispatch.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("raise SystemExit('PLANTED CODE RAN')\n")
    found = planted.stat()
    code = marshal.dumps(compile(planted.read_text(), str(planted), "exec"))
    layout = launch.ModuleCache(str(project), None, {})._layout(
        {"forge_runtime.hooks.dispatch": ("forge_runtime/hooks/dispatch.py", False,
                                          found.st_mtime_ns, found.st_size, code)})
    cache = Path(launch.cache_path(str(project)))
    cache.parent.mkdir(parents=True)
    cache.write_bytes(layout)
    assert launch.ModuleCache.open(str(project)).find_spec("forge_runtime.hooks.dispatch")
    reply = guard(plugin, project, "rm -rf .git/forge-goals")
    assert is_deny(reply) and "PLANTED" not in json.dumps(reply)
