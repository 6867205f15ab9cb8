"""Every install command written anywhere in the tree names our own package, a dependency
we declare, or a local source: a line that names a stranger's package (as `pip install
forge-runtime` did: that name on the public index is another project) fails here.

The scan reads each tracked text file for `pip install`, `uv pip install`, `uv tool
install`, `pipx install`, `npm install` and `apt-get install` and values every word a
command would install. Words computed at run time (`{...}`, `$need`, `<...>`) are left to
the code that computes them (forge_runtime/distribution.py, tested in test_packaging.py).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

from forge_runtime import distribution
from forge_runtime.hostkit import codex_binary
from forge_runtime.sandbox import tools

REPO = Path(__file__).resolve().parents[1]
_COMMAND = re.compile(r"\b(?:pip3?|uv pip|uv tool|pipx|npm|apt-get|apt) install(?P<rest>\s.*|$)")
_END = re.compile(r"`|\"|\)|&&|\|\||;|\||#|\\n|:\s|\s(?:failed|when|then|or|and|from|in)\b")
# Where a command stands as code, not prose ("a pip install's wiring"): at the start of a
# line, inside backticks, at the start of a string (after `python3 -m`, `{python} -m`), or
# after a hint's `Fix:`/`Next:`/`Or:`.
_CODE_BEFORE = re.compile(r"(?:^\s*(?:\$\s+|sudo\s+|RUN\s+|-\s+)?|[\"'`]|(?:Fix|Next|Or):\s*)"
                          r"(?:\S+\s+-m\s+)?$")
# Options whose next word is their value, not a package.
_VALUED = {"-d", "-w", "-t", "--target", "-r", "--requirement", "-c", "--constraint",
           "--python", "-p", "--index-url", "-i", "--extra-index-url", "--find-links", "-f",
           "--prefix", "--root", "--cache-dir", "--dest"}


def _declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = [*project["dependencies"],
                    *(r for extra in project["optional-dependencies"].values() for r in extra)]
    return {_name(requirement) for requirement in requirements}


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised (PEP 503)."""
    bare = re.split(r"[\s<>=!~;\[@]", requirement.strip().strip("'\""), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", bare).lower()


OURS = {_name(distribution.NAME)}
PYTHON_ALLOWED = OURS | _declared() | {"pip"}
NPM_ALLOWED = {codex_binary.PACKAGE}
APT_ALLOWED = {*tools.INSTALL.split()[3:], "tmux", "nodejs", "npm"}


def installed_words(line: str) -> list[tuple[str, str]]:
    """(tool, word) for each package an install command on `line` names."""
    found = []
    for match in _COMMAND.finditer(line):
        before = line[:match.start()]
        if not _CODE_BEFORE.search(before) and before.count("`") % 2 == 0:
            continue
        tool = match.group(0).split()[0]
        rest = _END.split(match.group("rest"), maxsplit=1)[0]
        try:
            words = shlex.split(rest)
        except ValueError:
            words = rest.split()
        skip = False
        for word in words:
            if skip:
                skip = False
            elif word in _VALUED:
                skip = True
            elif not word.startswith("-"):
                found.append((tool, word))
    return found


def foreign(tool: str, word: str) -> bool:
    if any(mark in word for mark in ("{", "$", "<", "*")) or word.startswith(("/", "~", ".")):
        return False  # computed, or a local source
    if tool in ("apt-get", "apt"):
        return word not in APT_ALLOWED
    if tool == "npm":  # @scope/name@version or name@version
        scope = "@" if word.startswith("@") else ""
        return scope + word.removeprefix("@").split("@")[0] not in NPM_ALLOWED
    return _name(word) not in PYTHON_ALLOWED


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                           check=True).stdout.decode().split("\0")
    files = []
    for name in filter(None, names):
        path = REPO / name
        if path == Path(__file__).resolve():
            continue  # its examples of a stranger's package are meant to be caught
        if path.is_file() and path.suffix not in (".png", ".jpg", ".whl", ".gz"):
            files.append(path)
    return files


def test_no_text_in_the_tree_installs_a_package_that_is_not_ours():
    offenders = []
    checked = 0
    for path in tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            for tool, word in installed_words(line):
                checked += 1
                if foreign(tool, word):
                    offenders.append(f"{path.relative_to(REPO)}:{number}: {tool} install {word}")
    assert checked > 10  # the scan sees the install lines the tree has
    assert offenders == []


def test_the_scan_catches_a_strangers_package():
    assert foreign("pip", "forge-runtime")  # the name the README once gave: not ours
    assert [w for t, w in installed_words("run `pip install forge-runtime` now")
            if foreign(t, w)] == ["forge-runtime"]
    assert [w for t, w in installed_words('"python3 -m pip install --force-reinstall '
                                          'requests"') if foreign(t, w)] == ["requests"]
    assert [w for t, w in installed_words("apt-get install -y bubblewrap socat curl")
            if foreign(t, w)] == ["curl"]
    assert not [w for t, w in installed_words(f"pipx install {distribution.NAME}")
                if foreign(t, w)]
    assert not [w for t, w in installed_words("uv tool install ~/src/forge") if foreign(t, w)]


def test_our_name_is_not_the_strangers():
    assert distribution.NAME != "forge-runtime"
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["name"] == \
        distribution.NAME
