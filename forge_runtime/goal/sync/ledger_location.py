"""Where a work tree's ledger is: the goal witness vouches for one place, and every other
way of pointing forge elsewhere fails closed.

forge finds the ledger from the work tree's layout (roots.py), and the witness is keyed by
the git directory's own path, so the ways left to point forge at another, empty ledger are
the files and moves around it. Each is caught here, from its effect, at every Stop that
charges and every `/goal` (the witness's `check` and `check_all`):

- `commondir` rewritten, planted or removed: git then follows a common dir forge does not,
  so the file must agree with the layout (`FORGE_GOAL_LEDGER_TAMPERED`, and the command
  that puts it back);
- the git directory swapped under the work tree (a linked work tree's `.git` file edited,
  `.git` replaced by a `gitdir:` file, `git init` over a ledger kept outside git): the
  witness notes each work tree's git directory and ledger,

      <witness root>/trees/<hash of the work tree's path>.json   {"root", "git_dir", "ledger"}

  and a work tree found with another one fails closed (a linked work tree's `Fix:` is
  `git worktree repair`);
- the project moved or copied: the ledger travels with it, under a new witness key. The
  witness notes where each ledger (by the repository id it holds, ledger.repository_id)
  lives,

      <witness root>/ledgers/<repository id>.json   {"places": {<ledger path>: <witness key>}}

  and a ledger found at a place it was never witnessed at stops with
  `FORGE_GOAL_LEDGER_MOVED` and `Fix: forge goal adopt`: a person says the new place is
  theirs, and `adopt` checks every goal there against the witness of the place it came from
  before noting it here, so the goals keep their counts (a copy continues from the count it
  carried, as does the original) and a rolled-back copy is refused. Neither a silent reset
  nor a silent inheritance.

`GIT_DIR` and `GIT_COMMON_DIR` in a hook's environment move nothing: forge's roots never
read them, and the git it runs has them removed (gitrefs.py).
"""

from __future__ import annotations

import os

from forge_runtime.goal.store.layout import places_file, repository_id_file, tree_file
from forge_runtime.goal.sync.witness_files import read, write

MOVED = "FORGE_GOAL_LEDGER_MOVED"
ADOPT_FIX = "forge goal adopt"


def _key(path: str) -> str:
    from forge_runtime.digest import sha256_hex

    return sha256_hex(os.fsencode(path))[:32]


def tree_path(root: str) -> str:
    return tree_file(_key(root))


def held_repository_id(ledger_root: str) -> str | None:
    """The repository id the ledger at `ledger_root` holds, never creating one (a ledger
    with none has no goal yet; ledger.repository_id checks the file where it is used)."""
    from forge_runtime import safeio

    try:
        text = safeio.read_bytes(repository_id_file(ledger_root)).decode(
            "ascii", "replace").strip()
    except OSError:
        return None
    return text if len(text) == 32 and text.isalnum() else None


class Whereabouts:
    """What the witness knows of one work tree's place: checked once, noted at appends."""

    def __init__(self, witness, project) -> None:
        self.witness = witness
        self.root = os.path.realpath(os.fspath(project.root))
        self.git_dir = None if project.git_dir is None else os.fspath(project.git_dir)
        self.common = None if project.git_common_dir is None else \
            os.fspath(project.git_common_dir)
        self.tree = {"root": self.root, "git_dir": self.git_dir and os.path.realpath(
            self.git_dir), "ledger": witness.ledger_root}
        self.unnoted: list[tuple[str, dict]] | None = None

    def vouch(self) -> None:
        """Fail closed unless forge finds this work tree's ledger where the witness saw it."""
        if self.unnoted is not None:
            return
        self.commondir_agrees()
        unnoted = []
        if not os.path.lexists(tree_path(self.root)):
            unnoted.append((tree_path(self.root), self.tree))
        elif (seen := self.seen_tree()) is not None:
            raise self._swapped(seen)
        repository = held_repository_id(self.witness.ledger_root)
        if repository is not None:
            places = (read(places_file(repository)) or {}).get("places")
            places = places if isinstance(places, dict) else {}
            if places and self.witness.ledger_root not in places:
                raise moved(self.witness.ledger_root, sorted(places))
            if not places:
                unnoted.append((places_file(repository), {"places": {
                    self.witness.ledger_root: self.witness.repository}}))
        self.unnoted = unnoted

    def note(self) -> None:
        """Write what `vouch` found unwitnessed (at the first append it vouched for)."""
        self.vouch()
        for path, data in self.unnoted:
            write(path, data)
        self.unnoted = []

    def seen_tree(self) -> dict | None:
        """The witness's note of this work tree, when it names another git dir or ledger."""
        seen = read(tree_path(self.root))
        if seen is None or (seen.get("git_dir"), seen.get("ledger")) == (
                self.tree["git_dir"], self.tree["ledger"]):
            return None
        return seen

    def settle_here(self, repository: str | None, places: dict[str, str]) -> None:
        """Note this work tree and its ledger (repository id `repository`, also witnessed
        at `places`) as where forge keeps them: a person adopted them (adoption.py)."""
        if repository is not None:
            write(places_file(repository), {"places": {
                **places, self.witness.ledger_root: self.witness.repository}})
        write(tree_path(self.root), self.tree)
        self.unnoted = []

    def commondir_agrees(self) -> None:
        """Fail closed unless the git dir's `commondir` names the common dir forge keeps."""
        if self.git_dir is None:
            return
        from forge_runtime.roots import claimed_common_dir

        claimed = os.path.realpath(claimed_common_dir(self.git_dir))
        if claimed == os.path.realpath(self.common):
            return
        import shlex  # (imports `re`: only on the way to a refusal)

        commondir = os.path.join(self.git_dir, "commondir")
        if os.path.realpath(self.git_dir) == os.path.realpath(self.common):
            fix = f"rm {shlex.quote(commondir)}"
        else:
            fix = f"printf '../..\\n' > {shlex.quote(commondir)}"
        raise _tampered(f"{commondir} points git at {claimed}, and this work tree's git "
                        f"directory is {self.git_dir}, whose ledger at "
                        f"{self.witness.ledger_root} is the one forge keeps and its witness "
                        "vouches for (the file rewritten, planted or removed)", fix)

    def _swapped(self, seen: dict):
        was = seen.get("git_dir")
        message = (f"the work tree {self.root} had its git directory at {was} (ledger "
                   f"{seen.get('ledger')}), and forge now finds "
                   f"{self.tree['git_dir'] or 'none'} (ledger {self.tree['ledger']}): its "
                   ".git file edited or replaced, or git set up over a ledger kept outside it")
        import shlex

        from forge_runtime.roots import layout_common_dir

        if isinstance(was, str) and os.path.isdir(was) and layout_common_dir(was) != was:
            return _tampered(message, f"git --git-dir={shlex.quote(layout_common_dir(was))} "
                                      f"worktree repair {shlex.quote(self.root)}")
        from forge_runtime.errors import EXIT_REFUSED, ForgeError
        from forge_runtime.goal.store.ledger import TAMPERED

        return ForgeError(message, ADOPT_FIX, exit_code=EXIT_REFUSED, code=TAMPERED,
                          rationale=f"when you set this up: carries the goals of the ledger "
                                    f"at {seen.get('ledger')} here, each count kept")


def _tampered(message: str, fix: str):
    from forge_runtime.goal.store.ledger import tampered

    return tampered(message, fix)


def moved(here: str, places: list[str]):
    from forge_runtime.errors import EXIT_REFUSED, ForgeError

    return ForgeError(
        f"the goal ledger at {here} was witnessed at {', '.join(places)}, not here: the "
        "project was moved or copied, and forge carries no budget to a new place unasked",
        ADOPT_FIX, exit_code=EXIT_REFUSED, code=MOVED,
        rationale="checks every goal here against the witness of the place it came from, "
                  "then keeps their counts here (never a fresh budget)")
