"""The agent's Bash never pushes, deletes or rewrites forge's refs: `refs/forge/*`.

forge keeps each goal's ledger (and claims) on the repository's own remote under
`refs/forge/` (goal/remote.py). forge's own pushes run in its hook processes; an agent that
could move those refs could roll a goal's count back for every fresh clone. So, in every
posture, a git command of the agent's is refused when it would change a ref in that
namespace, however it is spelled:
- a refspec whose destination is in it: `HEAD:refs/forge/goals/x`, `+src:refs/forge/...`,
  `:refs/forge/...` (a delete), `refs/forge/x` alone, a pattern that covers it
  (`refs/*:refs/*`, `refs/f*`, `*`), or a short name the remote would match there
  (`forge/goals/x` matches `refs/forge/goals/x`), and any destination forge cannot read;
- `--mirror` (pushes and prunes every ref), `--prune` with a pattern that covers it, and
  `--delete` of such a name, for `git push` and `git send-pack`;
- a push whose remote is configured to mirror, or to push such refspecs by default
  (`remote.<name>.mirror`, `remote.<name>.push`), read from the repository's and the
  user's config as on disk plus what the command wrote, from `-c`, and the config
  variables a push would read from the environment;
- writing those config keys (`git config`, `git -c`, `git remote add --mirror`), and
  moving a local ref in the namespace (`update-ref`, `symbolic-ref`, `branch`, `tag`).
Ordinary pushes (`git push origin main`, `git push -u origin feature`, `--tags`, `--all`)
are let through. The hosting side protects the namespace as well (docs/remote-ledger.md).
"""

import os

from forge_runtime.guard.paths import LEDGER_LABEL, Finding
from forge_runtime.guard.shell.syntax import LIFTED

NAMESPACE = "refs/forge/"
_SHORT = "forge/"  # what the remote matches as refs/forge/... (git's ref_rev_parse_rules)
_PUSH_VALUES = frozenset({"--repo", "-o", "--push-option", "--receive-pack", "--exec"})
_FALSE = frozenset({"false", "no", "off", "0", ""})
_LOCAL_REF_WRITERS = frozenset({"update-ref", "symbolic-ref", "branch", "tag"})
_ENV_CONFIG = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")  # what `git -c` hands a child
WHY = ("forge keeps goal ledgers there, published only by forge's own hooks "
       "(docs/remote-ledger.md)")


def _single_slashes(name: str) -> str:
    """`refs//forge` as git reads it (`re` is not imported for this: every guarded tool
    call would pay for it)."""
    while "//" in name:
        name = name.replace("//", "/")
    return name


def _remote_key(key: str) -> bool:
    """Is `key` `remote.<name>.push` or `remote.<name>.mirror` (any case)?"""
    parts = key.lower().split(".")
    return len(parts) >= 3 and parts[0] == "remote" and parts[-1] in ("push", "mirror")


def covers(name: str) -> bool:
    """Could a ref name or destination pattern land in `refs/forge/` on a remote?"""
    if LIFTED in name or "$" in name or "`" in name:
        return True  # a value forge cannot read
    name = _single_slashes(name.lstrip("+"))
    if name.startswith((NAMESPACE, _SHORT)) or name in ("refs/forge", "forge"):
        return True
    if "*" in name:
        prefix = name.split("*", 1)[0]
        return NAMESPACE.startswith(prefix) or _SHORT.startswith(prefix)
    return False


def _destination(refspec: str) -> str:
    spec = refspec.lstrip("+")
    return spec.rpartition(":")[2] if ":" in spec else spec


def _refused(what: str) -> Finding:
    return Finding(f"{what}, which would change forge's refs (refs/forge/*) on a remote; "
                   f"{WHY}")


def check_config(key: str, value: str) -> Finding | None:
    """`git -c KEY=VALUE` or `git config KEY VALUE` setting a remote to mirror, or to push
    into the namespace by default."""
    if not _remote_key(key):
        return None
    if key.lower().endswith(".mirror"):
        return None if value.strip().lower() in _FALSE else _refused(
            f"sets {key} (a mirror push)")
    return _refused(f"sets {key} to {value}") if covers(_destination(value)) else None


def check(sub: str, operands: list[str], ctx) -> Finding | None:
    """The refusal for git subcommand `sub` with `operands`, or None."""
    if sub in ("push", "send-pack"):
        return _check_push(sub, operands, ctx)
    if sub in _LOCAL_REF_WRITERS:  # `git tag refs/forge/x` makes refs/tags/refs/forge/x
        for arg in operands:
            if _single_slashes(arg).startswith(NAMESPACE):
                return _refused(f"runs git {sub} on {arg}")
        return None
    if sub == "config":
        words = [arg for arg in operands if not arg.startswith("-")]
        for index, word in enumerate(words):
            if _remote_key(word):
                value = words[index + 1] if index + 1 < len(words) else ""
                if not {"--unset", "--unset-all", "--get", "--get-all", "--get-regexp",
                        "unset", "get", "-l", "--list"} & set(operands):
                    return check_config(word, value or "true")
        return None
    if sub == "remote" and operands[:1] == ["add"] and any(
            arg.startswith("--mirror") for arg in operands):
        return _refused("adds a mirror remote")
    return None


def _check_push(sub: str, operands: list[str], ctx) -> Finding | None:
    positional: list[str] = []
    flags: set[str] = set()
    rest = list(operands)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            positional += rest
            break
        if arg.startswith("-") and arg != "-":
            name = arg.split("=", 1)[0]
            flags.add(name)
            if name in _PUSH_VALUES and "=" not in arg and rest:
                rest.pop(0)
        else:
            positional.append(arg)
    if "--mirror" in flags:
        return _refused(f"runs git {sub} --mirror")
    refspecs = positional if "--repo" in flags else positional[1:]  # --repo names it
    deleting = bool({"--delete", "-d"} & flags)
    for refspec in refspecs:
        if covers(refspec if deleting else _destination(refspec)):
            return _refused(f"pushes {refspec}")
    for name in _ENV_CONFIG:
        if ctx.env.get(name) is not None:
            return _refused(f"runs git {sub} with {name} set (config forge cannot read)")
    for key, value in configured(ctx):
        finding = check_config(key, value)
        if finding:
            return Finding(f"runs git {sub} while the config {finding.message[5:]}")
    return None


def configured(ctx) -> list[tuple[str, str]]:
    """(key, value) of every `remote.<name>.push` and `.mirror` in the repository's and the
    user's git config, as on disk plus what this command wrote there."""
    files = [os.path.join(os.path.dirname(entry.path), "config") for entry in ctx.protected
             if entry.label == LEDGER_LABEL]
    home = ctx.env.get("HOME")
    if home:
        files += [os.path.join(home, ".gitconfig"), os.path.join(home, ".config", "git",
                                                                     "config")]
    found = []
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(1_000_000)
        except OSError:
            text = ""
        subsection = None
        for line in (text + "\n" + ctx.written.get(path, "")).splitlines():
            line = line.split("#", 1)[0].split(";", 1)[0].strip()
            if line.startswith("["):
                name, quote, rest = line[1:].partition('"')
                subsection = rest.rpartition('"')[0] if quote and \
                    name.strip().lower() == "remote" else None
            elif subsection is not None and "=" in line:
                key, _, value = line.partition("=")
                key = key.strip().lower()
                if key in ("push", "mirror"):
                    found.append((f"remote.{subsection}.{key}", value.strip().strip('"')))
            elif subsection is not None and line.lower() == "mirror":
                found.append((f"remote.{subsection}.mirror", "true"))
    return found
