"""The agent's Bash never pushes, deletes or rewrites forge's refs: `refs/forge/*`.

forge keeps each goal's ledger (and claims) on the repository's own remote under
`refs/forge/` (goal/sync/remote.py). forge's own pushes run in its hook processes; an agent that
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
  (`remote.<name>.mirror`, `remote.<name>.push`, a `branch.<name>.merge` there for
  `push.default=upstream`), read from every config file git reads (the repository's, the
  user's, `$XDG_CONFIG_HOME/git/config`, and the files their `[include]`/`[includeIf]`
  name) as on disk plus what the command wrote, from `-c`, and the config variables a
  push would read from the environment; a config file forge cannot resolve refuses it;
- ref updates forge cannot see: `update-ref --stdin`, `send-pack --stdin`, `fast-import`;
- writing those config keys (`git config`, `git -c`, `git remote add --mirror`), and
  moving a local ref in the namespace (`update-ref`, `symbolic-ref`, `branch`, `tag`, a
  `fetch` refspec into it).
Ordinary pushes (`git push origin main`, `git push -u origin feature`, `--tags`, `--all`)
are let through. The hosting side protects the namespace as well (docs/remote-ledger.md).
"""

import os

from forge_runtime import safeio
from forge_runtime.guard.shell.syntax import LIFTED
from forge_runtime.protected.paths import LEDGER_LABEL, Finding

NAMESPACE = "refs/forge/"
_SHORT = "forge/"  # what the remote matches as refs/forge/... (git's ref_rev_parse_rules)
_PUSH_VALUES = frozenset({"--repo", "-o", "--push-option", "--receive-pack", "--exec"})
_FALSE = frozenset({"false", "no", "off", "0", ""})
_LOCAL_REF_WRITERS = frozenset({"update-ref", "symbolic-ref", "branch", "tag"})
_ENV_CONFIG = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")  # what `git -c` hands a child
_INCLUDE_DEPTH = 10  # git's own limit on nested includes
_CONFIG_LIMIT = 1_000_000
_STDIN_REF_WRITERS = frozenset({"update-ref", "send-pack"})  # with --stdin: unseen input
_FETCH_VALUES = frozenset({"--depth", "--deepen", "--shallow-since", "--shallow-exclude", "-j",
                           "--jobs", "--upload-pack", "--refmap", "--negotiation-tip", "-o",
                           "--server-option", "--filter"})
WHY = ("forge keeps goal ledgers there, published only by forge's own hooks "
       "(docs/remote-ledger.md)")


def _single_slashes(name: str) -> str:
    """`refs//forge` as git reads it (`re` is not imported for this: every guarded tool
    call would pay for it)."""
    while "//" in name:
        name = name.replace("//", "/")
    return name


def _remote_key(key: str) -> bool:
    """Is `key` `remote.<name>.push`, `remote.<name>.mirror` or `branch.<name>.merge` (the
    destination of `push.default=upstream`), in any case?"""
    parts = key.lower().split(".")
    return len(parts) >= 3 and (parts[0], parts[-1]) in (("remote", "push"),
                                                         ("remote", "mirror"),
                                                         ("branch", "merge"))


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
    into the namespace by default (a refspec, or a branch's upstream there)."""
    if not _remote_key(key):
        return None
    if key.lower().endswith(".merge"):
        return _refused(f"sets {key} to {value}") if covers(value) else None
    if key.lower().endswith(".mirror"):
        return None if value.strip().lower() in _FALSE else _refused(
            f"sets {key} (a mirror push)")
    return _refused(f"sets {key} to {value}") if covers(_destination(value)) else None


def check(sub: str, operands: list[str], ctx) -> Finding | None:
    """The refusal for git subcommand `sub` with `operands`, or None."""
    if sub == "fast-import" or (sub in _STDIN_REF_WRITERS and "--stdin" in operands):
        return _refused(f"runs git {sub}, whose ref updates come from input forge cannot see")
    if sub in ("push", "send-pack"):
        return _check_push(sub, operands, ctx)
    if sub == "fetch":  # `git fetch origin main:refs/forge/goals/x` moves a local one
        for refspec in _positionals(operands, _FETCH_VALUES)[1:]:
            if ":" in refspec and covers(_destination(refspec)):
                return _refused(f"fetches into {refspec}")
        return None
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


def _positionals(operands: list[str], values: frozenset[str],
                 flags: set[str] | None = None) -> list[str]:
    """The operands that are not options (or an option's value, for `values`); the
    options' names go into `flags`."""
    positional: list[str] = []
    rest = list(operands)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            positional += rest
            break
        if arg.startswith("-") and arg != "-":
            name = arg.split("=", 1)[0]
            if flags is not None:
                flags.add(name)
            if name in values and "=" not in arg and rest:
                rest.pop(0)
        else:
            positional.append(arg)
    return positional


def _check_push(sub: str, operands: list[str], ctx) -> Finding | None:
    flags: set[str] = set()
    positional = _positionals(operands, _PUSH_VALUES, flags)
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
    for setting in configured(ctx):
        if setting is None:
            return _refused(f"runs git {sub} with a git config file forge cannot read (an "
                            "include it cannot resolve)")
        finding = check_config(*setting)
        if finding:
            return Finding(f"runs git {sub} while the config {finding.message[5:]}")
    return None


def configured(ctx) -> list[tuple[str, str] | None]:
    """(key, value) of every `remote.<name>.push`, `.mirror` and `branch.<name>.merge` (the
    destination `push.default=upstream` pushes to) in the config git reads; None for a
    file forge cannot read there."""
    found: list[tuple[str, str] | None] = []
    for entry in config_entries(ctx):
        if entry is None:
            found.append(None)
            continue
        section, subsection, key, value = entry
        if (section, key) in (("remote", "push"), ("remote", "mirror"), ("branch", "merge")):
            found.append((f"{section}.{subsection}.{key}", value))
    return found


def config_files(ctx) -> list[str | None]:
    """The config files a git command of the agent's reads: the repository's, then the
    user's `~/.gitconfig` and `$XDG_CONFIG_HOME/git/config` (else `~/.config/git/config`);
    None for one forge cannot locate (XDG_CONFIG_HOME held in a variable it cannot know)."""
    files: list[str | None] = [os.path.join(os.path.dirname(entry.path), "config")
                               for entry in ctx.protected if entry.label == LEDGER_LABEL]
    home, xdg = ctx.env.get("HOME"), ctx.env.get("XDG_CONFIG_HOME", "")
    if home:
        files.append(os.path.join(home, ".gitconfig"))
    if xdg == "" and home:
        files.append(os.path.join(home, ".config", "git", "config"))
    elif xdg:
        files.append(os.path.join(xdg, "git", "config") if _plain_path(xdg) else None)
    return files


def config_entries(ctx) -> list[tuple[str, str | None, str, str] | None]:
    """(section, subsection, key, value) of every setting in `config_files`, and in the
    files their `[include]` and `[includeIf]` sections name (every condition taken as met),
    as on disk plus what this command wrote there; None for a file forge cannot read (an
    include path it cannot resolve, one nested past git's depth, or past its size)."""
    found: list = []
    pending = [(path, 0) for path in config_files(ctx)]
    while pending:
        path, depth = pending.pop(0)
        text = None if path is None or depth > _INCLUDE_DEPTH else _config_text(path, ctx)
        if text is None:
            found.append(None)
            continue
        for section, subsection, key, value in _settings(text):
            if section in ("include", "includeif") and key == "path":
                pending.append((_included(value, path, ctx), depth + 1))
            found.append((section, subsection, key, value))
    return found


def _plain_path(path: str) -> bool:
    return os.path.isabs(path) and LIFTED not in path and "$" not in path and "`" not in path


def _config_text(path: str, ctx) -> str | None:
    """The file's text as git would read it once this command's writes before it ran."""
    path = os.path.normpath(path)
    if path in ctx.made:
        return None
    try:
        with safeio.reader(path, encoding="utf-8", errors="replace", follow_links=True) as handle:
            text = handle.read(_CONFIG_LIMIT + 1)
    except OSError:
        text = ""
    if len(text) > _CONFIG_LIMIT:
        return None
    return text + "\n" + ctx.written.get(path, "")


def _included(value: str, including: str, ctx) -> str | None:
    """The file an include's `path` names, resolved as git does (`~/`, relative to the
    including file); None when forge cannot say which file that is."""
    if value.startswith("~/") and ctx.env.get("HOME"):
        value = os.path.join(ctx.env["HOME"], value[2:])
    elif not value.startswith("~"):
        value = os.path.join(os.path.dirname(including), value)
    return value if _plain_path(value) else None


def _settings(text: str):
    """(section, subsection, key, raw value) per setting of a git config file's text: both
    header forms (`[remote "x"]`, the old `[remote.x]`), a setting on its header's line, a
    bare key (true). A value continued on the next line (`\\`) is one forge cannot read."""
    section = subsection = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            head, _, line = line[1:].partition("]")
            name, quote, rest = head.partition('"')
            if quote:
                section, subsection = name.strip().lower(), rest.rpartition('"')[0]
            else:
                section, _, subsection = head.strip().lower().partition(".")
            line = line.strip()
        if not line or line[0] in "#;" or section is None:
            continue
        key, equals, value = line.partition("=")
        yield section, subsection, key.strip().lower(), _value(value) if equals else "true"


def _value(raw: str) -> str:
    """A config value as git reads it: quotes dropped, escapes applied, cut at a comment
    outside quotes; LIFTED for one continued on the next line (a trailing backslash)."""
    out: list[str] = []
    quoted = escaped = False
    for char in raw.strip():
        if escaped:
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(char, char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return LIFTED if escaped else "".join(out).strip()
