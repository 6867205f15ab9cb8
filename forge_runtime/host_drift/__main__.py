"""`python -m forge_runtime.host_drift [--claude PATH] [--codex PATH]`: the drift check.

With no argument (what `.ci/run` runs before the tests): the newest Claude Code and Codex
on their registries and every build the contract was measured on. With `--claude` or
`--codex`: that one build (`forge doctor` names this when the running host is newer than
the contract). Exit status 1 on any drift, an anchor lost, or a build it cannot get.
"""

# lazy: host_drift's claude_code and codex share their names with host_contract's, and
# importing a submodule rebinds its name in the package.
from __future__ import annotations

import argparse
import os
import sys
import time

from forge_runtime import hints
from forge_runtime.claude_binary import ClaudeNotFound
from forge_runtime.host_contract import newer_than
from forge_runtime.host_drift import GONE, Report, check_claude, check_codex
from forge_runtime.host_drift.builds import claude_builds, codex_builds
from forge_runtime.host_drift.claude_code import AnchorLost
from forge_runtime.hostkit.codex_binary import CodexNotFound


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _contract_file(host: str, problem: str) -> str:
    """The contract file a person edits for this drift."""
    from forge_runtime.host_contract import claude_code, claude_code_ignored, codex, codex_ignored

    files = {("Claude Code", True): claude_code, ("Claude Code", False): claude_code_ignored,
             ("Codex", True): codex, ("Codex", False): codex_ignored}
    return _shown(files[host, problem == GONE].__file__)


def render(report: Report) -> list[str]:
    """The lines saying how one build compares with the contract."""
    state = "newer than the contract's measured " if newer_than(
        report.version, report.measured) else "measured: "
    head = (f"{report.host} {report.version} ({report.path}): {report.surfaces} surfaces, "
            f"{state}{', '.join(report.measured)}")
    if not report.drift:
        return [head, "  every surface is classified by forge's host contract"]
    lines = [head]
    lines += [f"  {drift.problem}: {drift.category}: {drift.name}" for drift in report.drift]
    return lines


def _builds(args) -> list[tuple[str, str]]:
    if args.claude or args.codex:
        return [*(("claude", path) for path in args.claude),
                *(("codex", path) for path in args.codex)]
    return [*(("claude", str(path)) for path in claude_builds()),
            *(("codex", str(path)) for path in codex_builds())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m forge_runtime.host_drift",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--claude", action="append", default=[], metavar="PATH",
                        help="a Claude Code executable to check (repeatable)")
    parser.add_argument("--codex", action="append", default=[], metavar="PATH",
                        help="a native Codex executable to check (repeatable)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        builds = _builds(args)
    except (ClaudeNotFound, CodexNotFound) as exc:
        print(hints.error(f"cannot get a host build to check: {exc}",
                          "python -m forge_runtime.host_drift").render())
        return 1
    drifted = []
    for host, path in builds:
        try:
            report = (check_claude if host == "claude" else check_codex)(path)
        except (AnchorLost, ValueError, OSError) as exc:
            from forge_runtime.host_drift import claude_code, codex

            reader = _shown((claude_code if host == "claude" else codex).__file__)
            print(hints.error(f"cannot read {path}: {exc}", f"${{EDITOR:-vi}} {reader}",
                              "the build no longer has what the drift check anchors on: "
                              "find the new anchor in its binary").render())
            return 1
        print("\n".join(render(report)))
        if report.drift:
            drifted.append(report)
    seconds = time.monotonic() - started
    if drifted:
        first = drifted[0]
        problem = first.drift[0].problem
        print(hints.error(
            f"{sum(len(report.drift) for report in drifted)} host surface(s) drifted from "
            f"forge's contract (first: {first.host} {first.version})",
            f"${{EDITOR:-vi}} {_contract_file(first.host, problem)}",
            "classify each: in the host's contract if forge reads or protects it, in its "
            "_ignored file (with the version) if not; a surface gone from the build is "
            "one forge relied on").render())
        return 1
    print(hints.done(f"{len(builds)} build(s) checked in {seconds:.1f} s").render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
