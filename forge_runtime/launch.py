"""What a launcher's process runs once entry.py has found this plugin's forge_runtime.

`main` runs one hook event or the CLI. A hook launched this way exits with `LAUNCHED_OK`
instead of 0 when forge ran to the end: the launcher turns that into 0 for the host, and
anything else (an interpreter that is not Python, such as `FORGE_PYTHON=/bin/true`, one that
loaded some other forge_runtime, a crash, the guard's watchdog) into a deny for the guard.

A hook also imports in its own way: site-packages only when needed, forge's modules from one
file. Both keep every hook of a session without a goal within 1.5x of a bare interpreter
start (bench/targets.py), and neither changes what a hook can import.

`site` (the site directories, their `.pth` files and the look for a `sitecustomize`)
costs a quarter of a bare start, and the hooks of a session without a goal need nothing
from site-packages. The launcher starts hooks with `-S`, and `SiteOnDemand` runs `site`
the first time an import needs it, so a dependency such as yaml imports as it would have.

A hook process imports ten to twenty-five forge modules, and Python's path-based import
spends about 0.17 ms of machinery on each on a slow machine (trying every loader suffix,
then a stat, an open, a read and a check of its `.pyc`): 4 ms on the guard's Bash path, a
fifth of a bare interpreter start. `ModuleCache`, first on the meta path of a
hook, serves them from `forge_runtime/__pycache__/hooks.<cache tag>.cache`: the index is
read once, each module is one `pread` and `marshal.loads`, and each is validated the way a
`.pyc` is, against its source's size and modification time (to the nanosecond), so a
changed or deleted source, or a damaged entry, is imported the ordinary way.

The cache learns: after a hook has answered, `learn` adds the forge modules it imported
the ordinary way, writing a new file and renaming it over the old one, so after the first
hooks of a new version every hook import is served from it. Trust is that of a `.pyc`: the
file lives in the plugin's own tree (never the project's), written by forge alone; an
unreadable, truncated or foreign file is no cache, and a tree that cannot be written keeps
importing the ordinary way.

Layout: 8 bytes (the index's length), the marshalled index `(magic, root, {name: (path
relative to the plugin root, is_package, mtime_ns, size, offset, length)})`, then the
marshalled code objects, each at `offset` from the end of the index. `magic` is the
interpreter's bytecode magic number, as in a `.pyc`; `root` is where the plugin was when its
code was compiled (a code object names its file: a moved tree starts a new cache).
"""

import gc
import marshal
import os
import sys

import forge_runtime

# The status that proves the hook ran this plugin's forge to the end (see hooks/forge-hook).
LAUNCHED_OK = 97
# `killed` ran to the end and the session has no goal: the launcher passes the kill on.
NO_GOAL = 98
# A launched process ends with `os._exit` once its output is flushed (`end_process`): the
# interpreter's own ending (one last full garbage collection, every module torn down) is
# work for nobody, and it cost the guard's Bash path 5-6 ms, a quarter of a bare start, and
# `forge list` over 2,000 artifacts 56 ms. For the same reason the cyclic garbage collector
# is off in a hook, which is short and bounded: what it would free, the process's end frees.
# Nothing forge runs leaves buffered output or an exit handler behind (files are written with
# `with` or `os.write`, subprocesses are waited for, its threads are daemons). hostkit's hook
# recorder runs hooks inside its own process and turns this off.
ENDS_PROCESS = True
PACKAGE = "forge_runtime"
CACHE_NAME = "hooks.{tag}.cache"
_HEADER = 8
# The bytecode version, as a .pyc records it (the import system's own module is always loaded).
MAGIC = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER
_ModuleSpec = sys.modules["_frozen_importlib"].ModuleSpec


# The event of a `hook` run with no event argument (hooks/forge-hook): kept out of the
# interpreter's command line, so a process that kills whatever names `Stop` there meets only
# the launcher, whose death leaves this interpreter answering the host (measured).
EVENT_ENV = "FORGE_HOOK_EVENT"
# The launcher's pid, as it saw it (`$$`), kept as `forge_runtime.launcher_pid`.
LAUNCHER_ENV = "FORGE_HOOK_LAUNCHER"


def main(root: str, argv: list[str]) -> int:
    """`hook [<Event>]`, `killed <signal>` (hooks/forge-hook, for a Stop whose interpreter a
    signal killed), `cli <args>` or `notify` (a notification's sender, notify/sender.py),
    for the plugin at `root`."""
    surface, rest = (argv[0], argv[1:]) if argv else ("", [])
    if surface == "hook":
        event = os.environ.pop(EVENT_ENV, None)  # neither is inherited by what the hook runs
        pid = os.environ.pop(LAUNCHER_ENV, "")
        forge_runtime.launcher_pid = int(pid) if pid.isdigit() else None
        code = run_hook(rest or ([event] if event else []), install(root))
        return end_process(LAUNCHED_OK if code == 0 else code)
    if surface == "killed" and len(rest) == 1 and rest[0].isdigit():
        from forge_runtime import fastjson
        from forge_runtime.hooks.stop import on_killed

        reply = on_killed(int(rest[0]))
        if not reply:
            return end_process(NO_GOAL)
        sys.stdout.write(fastjson.dumps(reply) + "\n")
        return end_process(LAUNCHED_OK)
    if surface == "cli":
        from forge_runtime.cli.main import main as cli_main

        return end_process(cli_main(rest))
    if surface == "notify" and not rest:  # a notification's sender, started by a hook
        from forge_runtime.notify.sender import main as send

        return end_process(send(sys.stdin.buffer))
    sys.stderr.write("forge: entry.py takes `hook <Event>`, `killed <signal>`, `cli <args>` "
                     "or `notify`\n")
    return 2


def run_hook(argv: list[str], cache: "ModuleCache | None" = None) -> int:
    """One hook event from stdin, answered on stdout, with the collector off (see
    ENDS_PROCESS); then the module cache, if any, learns what this hook imported."""
    if ENDS_PROCESS:
        gc.disable()
    from forge_runtime.hooks.dispatch import run

    code = run(argv, sys.stdin.buffer, sys.stdout, sys.stderr)
    if cache is not None:
        sys.stdout.flush()
        cache.learn()
    return code


def end_process(status: int) -> int:
    """End the process with `status` now, its output flushed (see ENDS_PROCESS); `status`
    back when that is off, or when a reader went away (the interpreter then reports the
    broken pipe as it always has)."""
    if ENDS_PROCESS:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:
            return status
        os._exit(status)
    return status


class SiteOnDemand:
    """The last meta-path finder of a process started without `site` (`-S`).

    Asked for a top-level module that no other finder found, and that is not one of the
    standard library's (a dependency, or a name that does not exist), it leaves the meta path,
    does what `site` does at a normal start (isolated mode still keeps the user's site
    directory out), and asks the path finder again over the longer `sys.path`. A standard
    library name is left alone: those are the probes inside the library's own imports
    (`ntpath` tries `nt`), and a `.pth` file run in the middle of one would meet that module
    half-initialised.
    """

    @staticmethod
    def find_spec(name, path=None, target=None):
        if path is not None or name in sys.stdlib_module_names:
            return None
        sys.meta_path.remove(SiteOnDemand)
        import site
        from importlib.machinery import PathFinder

        site.main()
        return PathFinder.find_spec(name, None, target)


def install(root: str) -> "ModuleCache":
    """Put the plugin's module cache first on the meta path (and `SiteOnDemand` last, for a
    process started without `site`); the cache, to `learn` from once the hook has answered."""
    cache = ModuleCache.open(root)
    sys.meta_path.insert(0, cache)
    if sys.flags.no_site:
        sys.meta_path.append(SiteOnDemand)
    return cache


def cache_path(root: str) -> str:
    """Where the cache of the plugin at `root` lives, for this interpreter's bytecode."""
    return os.path.join(root, PACKAGE, "__pycache__",
                        CACHE_NAME.format(tag=sys.implementation.cache_tag))


class ModuleCache:
    """A meta-path finder and loader for forge's modules in one cache file."""

    def __init__(self, root: str, fd: int | None, index: dict, start: int = 0):
        self.root = root
        self.fd = fd
        self.index = index
        self.start = start  # where the code objects begin
        self.served: set[str] = set()
        self.earlier = set(sys.modules)  # imported before the cache was there to ask

    @classmethod
    def open(cls, root: str) -> "ModuleCache":
        """The cache of the plugin at `root`; an empty one when there is none to read."""
        try:
            fd = os.open(cache_path(root), os.O_RDONLY)  # not inherited (PEP 446)
        except OSError:
            return cls(root, None, {})
        try:
            length = int.from_bytes(os.read(fd, _HEADER), "little")
            if length > os.fstat(fd).st_size - _HEADER:
                raise EOFError("the cache ends inside its index")
            magic, built_at, index = marshal.loads(os.pread(fd, length, _HEADER))
            if magic != MAGIC or built_at != root or not isinstance(index, dict):
                raise ValueError("a cache of another interpreter, or of the tree elsewhere")
        except (OSError, ValueError, EOFError, TypeError):
            os.close(fd)
            return cls(root, None, {})
        return cls(root, fd, index, _HEADER + length)

    def find_spec(self, name, path=None, target=None):
        entry = self.index.get(name)
        if entry is None or not self._unchanged(entry):
            return None
        try:
            code = marshal.loads(self._code_bytes(name))
        except (OSError, ValueError, EOFError, TypeError):  # a damaged cache
            return None
        source = os.path.join(self.root, entry[0])
        spec = _ModuleSpec(name, self, origin=source, is_package=entry[1], loader_state=code)
        spec.has_location = True
        if entry[1]:
            spec.submodule_search_locations = [os.path.dirname(source)]
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        code, module.__spec__.loader_state = module.__spec__.loader_state, None
        self.served.add(module.__name__)
        exec(code, module.__dict__)

    def _unchanged(self, entry: tuple) -> bool:
        """Whether the entry's source is still the file it was compiled from."""
        try:
            found = os.stat(os.path.join(self.root, entry[0]))
        except OSError:
            return False
        return found.st_mtime_ns == entry[2] and found.st_size == entry[3]

    def _code_bytes(self, name: str) -> bytes:
        entry = self.index[name]
        data = os.pread(self.fd, entry[5], self.start + entry[4])
        if len(data) != entry[5]:
            raise EOFError(f"forge's module cache ends before {name}")
        return data

    def unserved(self) -> list[str]:
        """The plugin's modules this process imported the ordinary way."""
        own = os.path.join(self.root, PACKAGE, "")
        return sorted(name for name, module in list(sys.modules.items())
                      if (name == PACKAGE or name.startswith(PACKAGE + "."))
                      and name not in self.served and name not in self.earlier
                      and (getattr(module, "__file__", None) or "").startswith(own))

    def learn(self) -> bool:
        """Add the modules imported the ordinary way; True when a new cache was written.

        Every failure (a read-only plugin tree, a source changed meanwhile) leaves the cache
        as it was: the hook has already answered, and the next one tries again.
        """
        try:
            learned = self.unserved()
            if not learned:
                return False
            path = cache_path(self.root)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            temporary = f"{path}.{os.getpid()}.tmp"
            # Opened first: a tree that cannot be written is found out before any compiling.
            with open(temporary, "wb") as stream:
                try:
                    blobs = {name: entry for name, entry in self._still_valid().items()
                             if name not in learned}
                    for name in learned:
                        blobs[name] = self._compiled(sys.modules[name])
                    stream.write(self._layout(blobs))
                except BaseException:
                    os.remove(temporary)
                    raise
            os.replace(temporary, path)
        except Exception:  # noqa: BLE001 - the reply is out: a cache that cannot learn only costs time
            return False
        return True

    def _still_valid(self) -> dict:
        """The current entries whose source is unchanged, each with its code's bytes (an entry
        that cannot be read is left out, so a damaged cache heals)."""
        kept = {}
        for name, entry in self.index.items():
            try:
                if self._unchanged(entry):
                    kept[name] = (*entry[:4], self._code_bytes(name))
            except (OSError, EOFError):
                continue
        return kept

    def _compiled(self, module) -> tuple:
        source = module.__file__
        with open(source, "rb") as stream:
            found = os.fstat(stream.fileno())
            text = stream.read()
        code = compile(text, source, "exec", dont_inherit=True)
        is_package = hasattr(module, "__path__")
        return (os.path.relpath(source, self.root), is_package, found.st_mtime_ns,
                found.st_size, marshal.dumps(code))

    def _layout(self, blobs: dict) -> bytes:
        """The cache file's bytes for `blobs` (name -> source facts and code bytes)."""
        index, offset, parts = {}, 0, []
        for name in sorted(blobs):
            relative, is_package, mtime_ns, size, data = blobs[name]
            index[name] = (relative, is_package, mtime_ns, size, offset, len(data))
            parts.append(data)
            offset += len(data)
        head = marshal.dumps((MAGIC, self.root, index))
        return len(head).to_bytes(_HEADER, "little") + head + b"".join(parts)
