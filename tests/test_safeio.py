"""safeio: what a hook opens never blocks it and never leads it out of the project.

The attacks run for real on a scratch tree: FIFOs (each read in a child process with a
timeout, so a regression fails instead of hanging the suite), links at the name and links
on the way, devices and directories. The last test keeps every file a hook touches going
through this module: a new raw `open()` in a hook-side module fails here until it is routed
through safeio or listed, with its reason, in ALLOWED.
"""

from __future__ import annotations

import ast
import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime import safeio
from forge_runtime.roots import root_of_forge_path

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "project"
    (root / ".forge" / "local").mkdir(parents=True)
    (root / ".forge" / "local" / "state.md").write_text("state\n")
    (tmp_path / "outside").mkdir()
    return root


def _in_child(code: str, *args: str) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter, given 10 s: a call that blocks fails the test."""
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=10)


@pytest.mark.parametrize("call", ["read_bytes", "read_text", "open_regular"])
def test_a_fifo_is_refused_at_once_never_waited_on(tree, call):
    fifo = tree / ".forge" / "local" / "state.md"
    fifo.unlink()
    os.mkfifo(fifo)
    done = _in_child("import sys; from forge_runtime import safeio\n"
                     f"try: safeio.{call}(sys.argv[1], sys.argv[2])\n"
                     "except safeio.UnsafePath as exc: print(exc.errno, exc.strerror)",
                     str(fifo), str(tree))
    assert done.stdout == f"{errno.EINVAL} is not a regular file; forge does not open it\n"


def test_writing_or_appending_to_a_fifo_is_refused_at_once(tree):
    fifo = tree / ".forge" / "local" / "log"
    os.mkfifo(fifo)
    done = _in_child("import sys; from forge_runtime import safeio\n"
                     "for call in (lambda: safeio.append(sys.argv[1], b'x'),\n"
                     "             lambda: safeio.open_for_writing(sys.argv[1])):\n"
                     "    try: call()\n"
                     "    except OSError as exc: print(type(exc).__name__, exc.errno)",
                     str(fifo))
    # no reader: the non-blocking open itself fails (ENXIO); never a wait
    assert done.stdout.splitlines() == [f"OSError {errno.ENXIO}"] * 2


@pytest.mark.parametrize("what", ["directory", "device"])
def test_only_a_regular_file_is_read(tree, what):
    path = tree / ".forge" / "local" / "thing"
    if what == "directory":
        path.mkdir()
        with pytest.raises(safeio.UnsafePath, match="not a regular file"):
            safeio.read_bytes(path, tree)
    else:
        with pytest.raises(safeio.UnsafePath, match="not a regular file"):
            safeio.read_bytes("/dev/null")


def test_a_link_at_the_name_is_refused_to_read_and_replaced_not_written_through(tree):
    victim = tree.parent / "outside" / "victim"
    victim.write_text("keep\n")
    state = tree / ".forge" / "local" / "state.md"
    state.unlink()
    state.symlink_to(victim)
    with pytest.raises(safeio.UnsafePath, match="symbolic link") as raised:
        safeio.read_bytes(state, tree)
    assert raised.value.errno == errno.ELOOP
    safeio.replace(state, b"forge's\n", tree)
    assert victim.read_text() == "keep\n"
    assert not state.is_symlink() and state.read_bytes() == b"forge's\n"


@pytest.mark.parametrize("call", ["append", "open_for_writing"])
def test_a_link_at_the_name_is_refused_to_append_or_write_through(tree, call):
    victim = tree.parent / "outside" / "victim"
    victim.write_text("keep\n")
    log = tree / ".forge" / "local" / "log"
    log.symlink_to(victim)
    operations = {"append": lambda: safeio.append(log, b"x", tree),
                  "open_for_writing": lambda: safeio.open_for_writing(log, tree)}
    with pytest.raises(safeio.UnsafePath, match="symbolic link") as raised:
        operations[call]()
    assert raised.value.errno == errno.ELOOP
    assert victim.read_text() == "keep\n" and log.is_symlink()


@pytest.mark.parametrize("call", ["read", "replace", "create", "append", "remove"])
def test_a_linked_directory_below_the_root_is_refused_for_every_operation(tree, call):
    outside = tree.parent / "outside"
    (outside / "state.md").write_text("outside\n")
    local = tree / ".forge" / "local"
    for entry in local.iterdir():
        entry.unlink()
    local.rmdir()
    local.symlink_to(outside)
    path = local / ("state.md" if call in ("read", "remove") else "new.md")
    operations = {"read": lambda: safeio.read_bytes(path, tree),
                  "replace": lambda: safeio.replace(path, b"x", tree, create_dirs=True),
                  "create": lambda: safeio.create(path, b"x", tree),
                  "append": lambda: safeio.append(path, b"x", tree),
                  "remove": lambda: safeio.remove(path, tree)}
    with pytest.raises(safeio.UnsafePath, match="is a link or not a directory") as raised:
        operations[call]()
    assert raised.value.filename == str(local)
    assert sorted(p.name for p in outside.iterdir()) == ["state.md"]
    assert (outside / "state.md").read_text() == "outside\n"


def test_the_project_root_itself_may_be_reached_through_a_link(tree, tmp_path):
    """Only what is below the root is the agent's to swap: the root's own path is the
    person's (a home behind a link, /tmp on macOS)."""
    alias = tmp_path / "alias"
    alias.symlink_to(tree)
    assert safeio.read_bytes(alias / ".forge" / "local" / "state.md", alias) == b"state\n"


def test_replace_creates_missing_directories_below_the_root_and_leaves_no_temporary(tree):
    path = tree / ".forge" / "notes" / "deep" / "brief.md"
    safeio.replace(path, b"brief\n", tree, create_dirs=True)
    assert path.read_bytes() == b"brief\n"
    assert os.listdir(path.parent) == ["brief.md"]
    with pytest.raises(FileNotFoundError):
        safeio.replace(tree / ".forge" / "nowhere" / "x", b"x", tree)


def test_create_is_exclusive_and_remove_says_what_it_did(tree):
    path = tree / ".forge" / "local" / "key"
    assert safeio.create(path, b"one", tree) is True
    assert safeio.create(path, b"two", tree) is False and path.read_bytes() == b"one"
    assert safeio.remove(path, tree) is True and safeio.remove(path, tree) is False


def test_follow_links_is_only_for_the_hosts_files(tree, tmp_path):
    real = tmp_path / "transcript.jsonl"
    real.write_text("{}\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    with safeio.reader(link, "rb", follow_links=True) as handle:
        assert handle.read() == b"{}\n"
    with pytest.raises(safeio.UnsafePath):
        safeio.reader(link, "rb")


def test_the_root_below_which_no_link_is_followed_is_the_one_above_forge_dir():
    assert root_of_forge_path("/p/.forge/local/state.md") == "/p"
    assert root_of_forge_path("/p/.forge/notes/brief.md") == "/p"
    assert root_of_forge_path("/p/.forge/guard.yaml") == "/p"
    assert root_of_forge_path("/p/.forge/x/.forge/local/y") == "/p/.forge/x"
    assert root_of_forge_path("/p/src/state.md") is None
    assert root_of_forge_path("/p/.forge") is None


# -- every file a hook touches goes through safeio -------------------------------------------

# The modules a hook process runs (hooks/, the goal ledger, the gates, the guard, clarify,
# the host adapters, the sandbox layer, and what they stand on).
HOOK_SIDE = ("hooks", "goal", "gates", "guard", "clarify", "hosts", "sandbox", "roots",
             "project", "records", "statusline", "launch", "entry", "fastjson", "digest",
             "hints", "errors")
# Raw opens left in hook-side modules, each with why it cannot wedge a hook nor lead it out
# of the project. A new one fails the test below: route it through safeio, or add it here.
ALLOWED = {
    "goal.store.ledger": (1, "os.rename of a ledger directory forge staged itself; rename "
                             "never follows a link at either name"),
    "goal.sync.remote": (1, "os.rename of a staged ledger directory, as goal.store.ledger"),
    "goal.store.lock": (3, "the lock file: O_NOFOLLOW, O_RDWR (which never blocks on a FIFO), "
                           "a flock with a deadline; filelock only where fcntl is missing"),
    "goal.hosts.nesting": (2, "/proc/<pid>/stat and cmdline: the kernel's files, never the "
                              "agent's"),
    "goal.sync.publisher": (1, "the publisher's lock file: O_NOFOLLOW and a non-blocking flock"),
    "goal.store.record_file": (4, "ledger records: reads with safeio.READ_FLAGS, O_EXCL "
                                  "temporaries, names forge created replaced or linked, never "
                                  "followed"),
    "goal.store.state_file": (1, "forge's own state.md template, in the plugin's tree"),
    "launch": (5, "the hook module cache, in the plugin's own tree, never the project's"),
    "safeio": (9, "the module itself"),
}
_RAW_ATTRIBUTES = {"read_text", "write_text", "read_bytes", "write_bytes"}
_OS_CALLS = {"open", "replace", "rename"}
_OPENERS = {"os", "tarfile", "zipfile", "io", "gzip", "safeio"}


def _raw_opens(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [alias.name for alias in node.names]
            if isinstance(node, ast.ImportFrom) and node.module:
                names.append(node.module)
            found += [(node.lineno, "import filelock") for name in names
                      if name.split(".")[0] == "filelock"]
            continue
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        owner = func.value.id if isinstance(func, ast.Attribute) and \
            isinstance(func.value, ast.Name) else None
        if isinstance(func, ast.Name) and func.id == "open":
            found.append((node.lineno, "open()"))
        elif isinstance(func, ast.Attribute) and owner != "safeio":
            if func.attr in _RAW_ATTRIBUTES or (func.attr == "open" and owner not in _OPENERS):
                found.append((node.lineno, f".{func.attr}()"))
            elif owner == "os" and func.attr in _OS_CALLS:
                found.append((node.lineno, f"os.{func.attr}()"))
            elif owner == "tempfile":
                found.append((node.lineno, f"tempfile.{func.attr}()"))
    return found


def _hook_side_modules() -> dict[str, Path]:
    modules = {}
    for path in sorted((REPO / "forge_runtime").rglob("*.py")):
        name = ".".join(path.relative_to(REPO / "forge_runtime").with_suffix("").parts)
        name = name.removesuffix(".__init__")
        if name == "safeio" or name.split(".")[0] in HOOK_SIDE:
            modules[name] = path
    return modules


def test_every_file_a_hook_touches_is_opened_through_safeio():
    modules = _hook_side_modules()
    assert "hooks.stop" in modules and "goal.store.state_file" in modules  # the scan sees them
    problems = []
    for name, path in modules.items():
        found = _raw_opens(ast.parse(path.read_text(encoding="utf-8")))
        allowed = ALLOWED.get(name, (0, ""))[0]
        if len(found) != allowed:
            where = ", ".join(f"line {line}: {what}" for line, what in found)
            problems.append(f"{name}: {len(found)} raw open(s), {allowed} allowed ({where})")
    assert problems == [], ("open these through forge_runtime/safeio.py (no FIFO waited on, "
                            "no link followed), or list them in ALLOWED with why:\n"
                            + "\n".join(problems))
    assert set(ALLOWED) <= set(modules), "ALLOWED names a module that is gone"


def test_the_scan_finds_each_kind_of_raw_open():
    code = ("import filelock\nopen('x')\nPath('x').read_text()\nPath('x').write_bytes(b'')\n"
            "Path('x').open()\nos.replace('a', 'b')\nos.open('x', 0)\ntempfile.mkstemp()\n"
            "safeio.read_text('x')\nos.fdopen(3)\n")
    assert [what for _, what in _raw_opens(ast.parse(code))] == [
        "import filelock", "open()", ".read_text()", ".write_bytes()", ".open()",
        "os.replace()", "os.open()", "tempfile.mkstemp()"]
