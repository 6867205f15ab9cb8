"""What archivers and `patch` write: `tar -x` however `-C` is spelled, `unzip -d`, `cpio`,
`zip -m`, gzip and its kin, and the files a diff names.

An archive forge can read is listed and each member checked where it would land; one it
cannot list (missing, too large, holding links or `..` names, read from a pipe) is refused
where it could reach a protected path. Options that make an archiver run a command
(`tar --to-command`, `--checkpoint-action=exec=`, `-I`, `zip -TT`) are judged as code it
runs for you (code forge cannot read is refused where it could reach a protected path), and
one that renames members (`--transform`, `unzip -j`), lets them leave the directory (`-P`,
`unzip -:`) or is not known to keep them in place makes the archive one forge cannot list.
"""

from __future__ import annotations

import os

from forge_runtime.guard.shell.state import (
    RUNS,
    WRITES,
    Context,
    check_destroy,
    check_write,
    expansions,
    made_link,
    options,
    risky_unknown,
    run_for_you,
    small_text,
    spelled_out,
    touches,
)
from forge_runtime.guard.shell.syntax import LIFTED
from forge_runtime.protected.paths import Finding, hit

COMPRESSORS = frozenset({"gzip", "gunzip", "pigz", "bzip2", "bunzip2", "xz", "unxz", "lzma",
                         "unlzma", "compress", "uncompress", "lzip"})
KEEPING_COMPRESSORS = frozenset({"zstd", "unzstd", "lz4", "brotli"})
_ARCHIVE_BYTES_LIMIT = 20_000_000
_ARCHIVE_MEMBERS_LIMIT = 10_000


# tar's options that change no member's name or place, nor run anything: with any other
# option an archive's members are not known to land where their names say.
_TAR_PLAIN = frozenset({
    "-x", "-c", "-t", "-r", "-u", "-A", "-f", "-C", "-z", "-j", "-J", "-Z", "-a", "-v", "-k",
    "-m", "-o", "-p", "-O", "-U", "-w", "-B", "-i", "-T", "-X", "-S", "-W", "-h", "-l", "-s",
    "-R", "-b", "-H", "-q", "--extract", "--get", "--list", "--create", "--append",
    "--update", "--file", "--directory", "--gzip", "--gunzip", "--ungzip", "--bzip2",
    "--xz", "--lzma", "--zstd", "--lzip", "--lzop", "--compress", "--uncompress",
    "--auto-compress", "--verbose", "--keep-old-files", "--skip-old-files",
    "--keep-newer-files", "--overwrite", "--overwrite-dir", "--no-overwrite-dir",
    "--unlink-first", "--recursive-unlink", "--touch", "--no-same-owner", "--same-owner",
    "--no-same-permissions", "--same-permissions", "--preserve-permissions",
    "--numeric-owner", "--exclude", "--exclude-from", "--exclude-vcs", "--exclude-caches",
    "--files-from", "--wildcards", "--no-wildcards", "--anchored", "--no-anchored",
    "--ignore-case", "--no-ignore-case", "--to-stdout", "--warning", "--totals",
    "--checkpoint", "--no-recursion", "--recursion", "--null", "--no-null",
    "--verbatim-files-from", "--format", "--owner", "--group", "--mode", "--mtime",
    "--sort", "--remove-files", "--delay-directory-restore", "--one-file-system",
    "--sparse", "--blocking-factor", "--record-size", "--ignore-zeros", "--occurrence",
    "--force-local", "--no-xattrs", "--xattrs", "--acls", "--no-acls", "--selinux",
    "--no-selinux", "--dereference", "--hard-dereference", "--quiet", "--interactive",
    "--confirmation", "--same-order", "--preserve-order", "--read-full-records", "--verify",
    "--show-omitted-dirs", "--index-file", "--block-number", "--utc", "--full-time",
    "--no-seek", "--seek", "--backup", "--suffix", "--check-links", "--restrict",
    "--strip-components",
})
_TAR_CODE = frozenset({"-I", "-F", "--use-compress-program", "--to-command", "--info-script",
                       "--new-volume-script", "--rsh-command"})
# The long options the model reads, for the unique prefixes tar (argp) takes for them.
_TAR_LONG = tuple(sorted(option for option in _TAR_PLAIN | _TAR_CODE | {
    "--checkpoint-action", "--transform", "--xform", "--absolute-names"}
    if option.startswith("--")))


def _check_tar(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """tar's modes, `-C DIR` however it is spelled, the options that run a command, and
    what an archive it can read holds; an option that renames members (`--transform`,
    bsdtar's `-s`) or that tar does not document here makes them unknown."""
    takes_value = "fCTXbgHKNVIFL"
    if args and not args[0].startswith("-"):  # old style: `tar xvCf DIR A` takes values in order
        rest, spelled = list(args[1:]), []
        for letter in args[0]:
            spelled.append("-" + letter)
            if letter in takes_value and rest:
                spelled.append(rest.pop(0))
        args = spelled + rest
    args = spelled_out(args, _TAR_LONG)  # `--to-com=CMD` is `--to-command=CMD` to tar
    operands, found = options(args, takes_value + ("s" if name == "bsdtar" else ""), frozenset({
        "--file", "--directory", "--files-from", "--exclude-from", "--use-compress-program",
        "--to-command", "--info-script", "--new-volume-script", "--rsh-command",
        "--transform", "--xform", "--exclude", "--strip-components", "--suffix"}))
    names = {option for option, _ in found}
    for option, code in found:
        if option in _TAR_CODE or (option == "--checkpoint-action" and code and
                                   code.startswith("exec=")):
            code = code.split("=", 1)[1] if option == "--checkpoint-action" else code
            return run_for_you(code or LIFTED, ctx, f"{name} {option}") or (False, False)
    archive = next((value for option, value in found if option in ("-f", "--file")), None)
    if names & {"-c", "--create", "-r", "--append", "-u", "--update", "-A"}:
        if archive:
            finding = check_write(archive, ctx, verb="runs tar writing")
            if finding:
                return finding
        if "--remove-files" in names:
            return check_destroy(operands, ctx)
        return True, touches(operands, ctx)
    if not names & {"-x", "--extract", "--get"} or names & {"-O", "--to-stdout"}:
        return True, touches(operands, ctx)
    into = [value for option, value in found if option in ("-C", "--directory")] or ["."]
    renamed = names - _TAR_PLAIN or (name == "bsdtar" and "-s" in names)
    strip = next((value for option, value in found if option == "--strip-components"), "0")
    return _check_unpack(name, archive, into[-1], ctx, absolute="-P" in names or
                         "--absolute-names" in names, renamed=bool(renamed),
                         strip=int(strip) if strip.isdigit() else None)


# unzip's options that keep each member where its name says (-j flattens: by base name).
_UNZIP_PLAIN = frozenset("oOnqdxajLCMKXDTVUWIPbBsuf")


def _check_unzip(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    operands, found = options(args, "dxPOI")
    names = {option for option, _ in found}
    if names & {"-l", "-t", "-v", "-Z", "-p", "-c", "-z"}:
        return True, touches(operands, ctx)
    into = next((value for option, value in found if option == "-d"), ".")
    unknown = {option for option in names if option[1:] not in _UNZIP_PLAIN}
    return _check_unpack(name, operands[0] if operands else None, into, ctx,
                         absolute=bool(unknown & {"-:", "-^"}), renamed=bool(unknown),
                         flatten="-j" in names)


def _check_7z(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """7-Zip: `x` extracts with paths (into `-oDIR`), `e` flattens, `l` and `t` read, the
    others write the archive."""
    command = args[0] if args else ""
    operands = [arg for arg in args[1:] if not arg.startswith("-")]
    into = next((arg[2:] for arg in args[1:] if arg.startswith("-o")), ".")
    if command in ("l", "t", "h", "i", "b"):
        return True, touches(operands, ctx)
    if command in ("x", "e"):
        return _check_unpack(name, operands[0] if operands else None, into, ctx,
                             absolute=False, flatten=command == "e")
    if operands:
        finding = check_write(operands[0], ctx, verb=f"runs {name} writing")
        if finding:
            return finding
    return True, touches(operands, ctx)


def _check_pax(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """pax reads (`-r`, from `-f` or its input), writes an archive (`-w`), or copies into a
    directory (`-rw`); `-s` renames members."""
    operands, found = options(args, "fsxobBEGTUp")
    names = {option for option, _ in found}
    archive = next((value for option, value in found if option == "-f"), None)
    if "-r" in names and "-w" in names:
        return _check_unpack(name, None, operands[-1] if operands else ".", ctx,
                             absolute=True)
    if "-r" in names:
        return _check_unpack(name, archive, ".", ctx, absolute=True, renamed="-s" in names)
    if "-w" in names and archive:
        return check_write(archive, ctx, verb="runs pax writing") or (True, False)
    return True, touches(operands, ctx)


def _check_ar(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """ar: `x` extracts every member into the working directory, `t`/`p` read."""
    keys = args[0].lstrip("-") if args else ""
    if "x" in keys:
        return _check_unpack(name, None, ".", ctx, absolute=False)
    if any(key in keys for key in "rqdmsu") and len(args) > 1:
        return check_write(args[1], ctx, verb="runs ar writing") or (True, False)
    return True, touches(args[1:], ctx)


def _check_cpio(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    operands, found = options(args, "EFHIMORDe")
    names = {option for option, _ in found}
    if "-i" in names or "--extract" in names:  # GNU cpio keeps absolute names unless told
        into = next((value for option, value in found if option in ("-D", "--directory")
                     and value), ".")
        return _check_unpack(name, None, into, ctx,
                             absolute="--no-absolute-filenames" not in names)
    if "-p" in names or "--pass-through" in names:
        return _check_unpack(name, None, operands[0] if operands else ".", ctx,
                             absolute=False)
    return True, touches(operands, ctx)


def _check_unpack(name: str, archive: str | None, into: str, ctx: Context, *,
                  absolute: bool, renamed: bool = False, flatten: bool = False,
                  strip: int | None = 0) -> Finding | tuple:
    """An archive unpacked into `into`: each member it holds, when forge can list them and
    they land where their names say (less `strip` leading parts, or by base name when
    `flatten`); otherwise refused where the directory holds a protected path, and where
    the command runs from one when members may leave it (`-P`, `unzip -:`)."""
    members = None if renamed or strip is None or archive is None \
        else _members(archive, ctx, escaping=absolute)
    if members is not None:
        for member in members:
            parts = member.split("/")[strip:]
            if not parts or not "".join(parts):
                continue
            landed = parts[-1] if flatten else "/".join(parts)
            if landed.startswith("/") and not absolute:
                landed = landed.lstrip("/")
            finding = check_write(os.path.join(into, landed), ctx,
                                  verb=f"runs {name} to unpack {member} into")
            if finding:
                return finding
        return True, False
    if absolute:  # members may land anywhere: every protected path is in reach
        return Finding(f"runs {name} on an archive forge cannot list whose members may land "
                       f"outside {into} (absolute or `..` names are honoured)")
    for path in expansions(into, ctx):
        if path is None:
            if risky_unknown(into, ctx):
                return Finding(f"runs {name} to unpack into `{into}`, a directory forge "
                               "cannot know before it runs")
            continue
        entry = hit(path, ctx.protected, destructive=True)
        if entry:
            return Finding(f"runs {name} to unpack an archive forge cannot list into "
                           f"{into}, which holds {entry.label}", entry)
    for path in expansions(into, ctx):  # its members may be symlinks, to anywhere
        made_link(path, None, ctx)
    return True, False


def _members(archive: str, ctx: Context, *, escaping: bool = False) -> list[str] | None:
    """The member names of an archive on disk; None when forge cannot list them in time
    (missing, too large, unreadable) or a member could land outside its own name (a link;
    an absolute or `..` name, unless the unpacker honours them: `escaping`)."""
    paths = expansions(archive, ctx)
    if len(paths) != 1 or paths[0] is None or not os.path.isfile(paths[0]) \
            or os.path.getsize(paths[0]) > _ARCHIVE_BYTES_LIMIT:
        return None
    try:
        if paths[0].endswith(".zip"):
            import zipfile

            with zipfile.ZipFile(paths[0]) as bundle:
                infos = bundle.infolist()
                if any(info.external_attr >> 16 & 0o170000 == 0o120000 for info in infos):
                    return None  # a symlink member: unzip makes it a link
                names = [info.filename for info in infos]
        else:
            import tarfile

            with tarfile.open(paths[0]) as bundle:
                members = bundle.getmembers()
                if any(member.issym() or member.islnk() for member in members):
                    return None
                names = [member.name for member in members]
    except Exception:  # noqa: BLE001 - an archive forge cannot read is one it cannot list
        return None
    if len(names) > _ARCHIVE_MEMBERS_LIMIT or not escaping and any(
            name.startswith("/") or ".." in name.split("/") for name in names):
        return None
    return names


def _check_zip(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    if any(arg in ("-TT", "--unzip-command") or arg.startswith("--unzip-command=")
           for arg in args):  # its command was judged (OPTION_EFFECTS): code forge runs not
        return False, False
    operands, found = options(args, "bDnOPtxiZ")
    names = {option for option, _ in found}
    if operands:
        finding = check_write(operands[0], ctx, verb="runs zip writing")
        if finding:
            return finding
    if names & {"-m", "--move"}:
        return check_destroy(operands[1:], ctx)
    return True, touches(operands, ctx)


def _check_compressor(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """gzip and its kin replace each file with its (de)compressed twin: the original goes."""
    operands, found = options(args, "So" if name in KEEPING_COMPRESSORS else "S")
    names = {option for option, _ in found}
    for option, value in found:
        if option in ("-o", "--output") and value:
            finding = check_write(value, ctx, verb=f"runs {name} writing")
            if finding:
                return finding
    keeps = names & {"-c", "--stdout", "-k", "--keep", "-l", "--list", "-t", "--test"}
    if name in KEEPING_COMPRESSORS:
        keeps = not names & {"--rm"}
    if keeps:
        return True, touches(operands, ctx)
    return check_destroy(operands, ctx)


def check_patch(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """patch writes the files its diff names (`+++ b/path`, less `-pN` parts): read from
    the diff when forge can, else refused where it could reach a protected path."""
    operands, found = options(args, "pdioBrDFgVYzsuw", frozenset({"--input", "--directory"}))
    diff = next((value for option, value in found if option in ("-i", "--input")), None)
    diff = diff or (operands[1] if len(operands) >= 2 else ctx.stdin)
    if operands:  # `patch FILE [DIFF]`: FILE is the one written
        return check_write(operands[0], ctx, verb="runs patch on") or (True, False)
    text = small_text(diff, ctx) if diff else None
    if text is None:
        if risky_unknown("", ctx):
            return Finding("runs patch with a diff forge cannot read, which may write any "
                           "file, from a directory that holds a protected path")
        return True, False
    for line in text.splitlines():
        if line.startswith(("+++ ", "--- ")):
            target = line[4:].split("\t", 1)[0].strip()
            parts = target.split("/")
            for strip in range(len(parts)):  # any -pN: check every suffix
                finding = check_write("/".join(parts[strip:]), ctx, verb="runs patch on")
                if finding:
                    return finding
    return True, False


# The options of this family that write a file or run a program beyond what its models
# read (walk.py reads them first, state.check_options): patch's output, reject and backup
# files, cpio's archive file and remote shell. tar's (`_TAR_CODE`) are read by its model,
# which knows its old-style clusters (`tar xvIf PROGRAM A`).
OPTION_EFFECTS = {
    "patch": {"-o": WRITES, "--output": WRITES, "-r": WRITES, "--reject-file": WRITES,
              "-B": WRITES, "--prefix": WRITES, "-Y": WRITES, "--basename-prefix": WRITES},
    "cpio": {"-F": WRITES, "--file": WRITES, "-O": WRITES, "--rsh-command": RUNS},
    "zip": {"-TT": RUNS, "--unzip-command": RUNS},
}

# This family's models, by command (see the table in walk.py).
MODELS = {"tar": _check_tar, "bsdtar": _check_tar, "gtar": _check_tar, "unzip": _check_unzip,
          "cpio": _check_cpio, "zip": _check_zip, "patch": check_patch, "pax": _check_pax,
          "ar": _check_ar, **dict.fromkeys(("7z", "7za", "7zr", "7zz"), _check_7z),
          **dict.fromkeys(COMPRESSORS | KEEPING_COMPRESSORS, _check_compressor)}
