"""A goal's ledger: an append-only, hash-chained sequence of records under one directory.

A goal's directory is `<ledger root>/<nonce>`: its records, the head pointer to the last of
them, one file per charged turn and the writers' lock (layout.py draws the whole tree).
The head pointer names the records directory in use (`"records": "records.<n>"`) once a
join with another clone's chain made a new generation.

Every record holds the whole goal as it stands after it (`goal`: nonce, objective, counts,
ceiling, status), so the current goal is the last record and no reader replays the chain.

Readers that do not hold the writers' lock use `current()`, `verified()` and `history()`,
which take it: a record appended while a lock-free reader looked would otherwise read as one
appended out of sequence (an unexpected file, or a second record past the head pointer),
and a person running `forge goal verify` beside a live session would be told of tampering.
`head()` and `verify()` themselves are for callers that hold the lock.

Two levels of checking, chosen so that a Stop costs the same on turn 2,000 as on turn 20:
- `Ledger.head()` (every charge, O(1)): the head pointer names the last record, that record
  matches its own hash and the pointer, the record before it is the one it seals, the step
  between them obeys the rules (a record anyone could seal cannot raise the ceiling), and
  one more link chosen by the head hash (a rolling audit that walks the chain over time).
  No record may exist beyond the head except the one a crash left between writing a record
  and moving the pointer; that one is adopted when it seals the head, else it is tampering.
- `Ledger.verify()` (activation, `forge goal verify`, `forge ledger verify`): every record,
  every link, and every transition against the rules (a charge adds exactly one turn, the
  ceiling is 20 x activations, a tranche only after exhaustion, and so on).
A ledger given a witness (witness.py) also checks its head against the one noted outside the
work tree when it settles and verifies, and notes every append there.
"""

from __future__ import annotations

import os

from forge_runtime.digest import sha256_hex
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.goal.budget.ceilings import (
    ALL,
    MINUTES,
    TOKENS,
    TURNS,
    USAGE_LIMIT,
    USD,
    epoch,
    minutes_used,
    now,
    plan_reached,
    reached,
    usage_limited,
    usd_reached,
)
from forge_runtime.goal.store import merge, record_file
from forge_runtime.goal.store.layout import (
    HEAD_NAME,
    RECORDS_DIR,
    TURNS_DIR,
    goal_dir_names,
    head_file,
    repository_id_file,
    staging_dir_name,
)
from forge_runtime.goal.store.lock import locked
from forge_runtime.goal.store.merge import MERGE, OVERRUN
from forge_runtime.project import join
from forge_runtime.records import record

TAMPERED = "FORGE_GOAL_LEDGER_TAMPERED"
VERIFY_FIX = "forge goal verify"
TRANCHE = 20
GENERATION = "records"  # head.json's key naming the records directory in use

ACTIVE, EXHAUSTED, COMPLETE, CANCELLED = "active", "exhausted", "complete", "cancelled"
STATUSES = (ACTIVE, EXHAUSTED, COMPLETE, CANCELLED)
# OVERRUN: a turn the host started for the agent (a wake-up, a cron, a notification) after
# the goal ended: it grants nothing and counts no turn, but it is on the chain with what it
# spent (named in merge.py, which joins such turns of two clones too)


def tampered(message: str, fix: str = VERIFY_FIX) -> ForgeError:
    """The fail-closed error for a ledger or state that is not what forge wrote."""
    return ForgeError(message, fix, exit_code=EXIT_REFUSED, code=TAMPERED)


def turn_key(turn_id: str) -> str:
    """A file name for a turn identity, whatever characters the identity holds."""
    return sha256_hex(turn_id.encode("utf-8"))[:40]


class Head(record("Head", "record stale_pointer")):
    """The last record of a goal, checked; `goal` is the goal as it stands now.
    `stale_pointer`: a crash left the pointer one record behind. (A record, not a
    dataclass: `dataclasses` costs every charging Stop a bare interpreter start.)"""

    __slots__ = ()

    @property
    def seq(self) -> int:
        return self.record["seq"]

    @property
    def goal(self) -> dict:
        return self.record["goal"]


class Ledger:
    """The records of one goal (one nonce). Its paths are of `ledger_root`'s kind (a str,
    or a `pathlib.Path`: project.join)."""

    def __init__(self, ledger_root: str | os.PathLike, nonce: str, witness=None) -> None:
        self.root = ledger_root
        self.nonce = nonce
        self.witness = witness  # a witness.Witness: checked when settling, told each append
        self.dir = join(ledger_root, nonce)
        self.records_dir = join(self.dir, RECORDS_DIR)
        self.head_path = join(self.dir, HEAD_NAME)
        self.turns_dir = join(self.dir, TURNS_DIR)

    # -- reading ---------------------------------------------------------------------------

    def exists(self) -> bool:
        return os.path.exists(self.head_path) or os.path.exists(self.records_dir)

    def record_at(self, seq: int) -> dict:
        """Record `seq`, checked against its own hash."""
        return self._record(seq)

    def _record(self, seq: int) -> dict:
        try:
            return record_file.read_record(self.records_dir, seq)
        except record_file.RecordError as exc:
            raise tampered(f"goal {self.nonce}: record {exc}") from None

    def head(self) -> Head:
        """The last record, checked in O(1) (see the module docstring)."""
        try:
            pointer = record_file.read_json_file(self.head_path)
        except record_file.RecordError as exc:
            raise tampered(f"goal {self.nonce}: head {exc}") from None
        self._use_generation(pointer.get(GENERATION, RECORDS_DIR))
        if os.path.islink(self.dir) or os.path.islink(self.records_dir):
            raise tampered(f"goal {self.nonce}: its directory was replaced by a symlink")
        seq = pointer.get("seq")
        if not isinstance(seq, int) or seq < 1:
            raise tampered(f"goal {self.nonce}: head.json names no record")
        last = self._record(seq)
        if last.get("hash") != pointer.get("hash"):
            raise tampered(f"goal {self.nonce}: record {seq} is not the one head.json names")
        stale = False
        follower = os.path.join(self.records_dir, record_file.record_name(seq + 1))
        if os.path.lexists(follower):
            adopted = self._record(seq + 1)
            _check_link(self.nonce, adopted, last)
            if os.path.lexists(os.path.join(self.records_dir, record_file.record_name(seq + 2))):
                raise tampered(f"goal {self.nonce}: records appended out of sequence "
                               f"after record {seq + 1}")
            last, stale = adopted, True
        _check_goal_fields(self.nonce, last)
        if last["seq"] > 1:
            before = self._record(last["seq"] - 1)
            _check_link(self.nonce, last, before)
            _check_goal_fields(self.nonce, before)
            check_transition(before, last, self.nonce)  # a sealed record obeys the rules too
            self._audit_one_link(last)
        return Head(last, stale)

    def _use_generation(self, name) -> None:
        """Read records from the directory head.json names: `records`, or `records.<n>`
        once a join with another clone's chain replaced the records after the fork
        (`install`)."""
        if name != RECORDS_DIR and not (
                isinstance(name, str) and name.startswith(RECORDS_DIR + ".")
                and name[len(RECORDS_DIR) + 1:].isdigit()):
            raise tampered(f"goal {self.nonce}: head.json names records directory {name!r}")
        self.records_dir = join(self.dir, name)

    def _audit_one_link(self, last: dict) -> None:
        """Check one more link, picked by the head hash, so every link gets checked in time."""
        if last["seq"] < 3:
            return
        seq = 2 + int(last["hash"][:12], 16) % (last["seq"] - 2)
        _check_link(self.nonce, self._record(seq), self._record(seq - 1))

    def verify(self) -> dict:
        """Check every record and transition; return the goal as the chain says it is."""
        head = self.head()
        before: dict | None = None
        charged = set()
        for seq in range(1, head.seq + 1):
            record = self._record(seq)
            charged.update(map(turn_key, merge.marked(record)))
            check_step(self.nonce, before, record, _Chain(self, seq - 1))
            before = record
        names = {entry for entry in os.listdir(self.records_dir) if not entry.startswith(".")}
        expected = {record_file.record_name(seq) for seq in range(1, head.seq + 1)}
        if names - expected:
            raise tampered(f"goal {self.nonce}: unexpected files in records: "
                           f"{', '.join(sorted(names - expected))}")
        markers = {name for name in os.listdir(self.turns_dir) if not name.startswith(".")} \
            if os.path.isdir(self.turns_dir) else set()  # a crash may leave a `.tmp-` file
        if markers - charged:  # a marker is written after its record, never before
            raise tampered(f"goal {self.nonce}: {len(markers - charged)} turn markers name "
                           "charges the chain no longer has (records cut from its end)")
        if self.witness is not None:
            self.witness.check(self, head)
        return head.goal

    def pointer(self) -> int | None:
        """The sequence number head.json names, unchecked (a cheap sign that the goal moved;
        `head()` is the check)."""
        try:
            seq = record_file.read_json_file(self.head_path).get("seq")
        except record_file.RecordError:
            return None
        return seq if isinstance(seq, int) else None

    def previous(self, record: dict) -> dict:
        """The record that `record` seals, checked against its own hash and the link."""
        earlier = self._record(record["seq"] - 1)
        _check_link(self.nonce, record, earlier)
        return earlier

    def current(self) -> Head:
        """`head()` for a caller that does not hold the lock (it takes a reader's)."""
        with self.lock(shared=True):
            return self.head()

    def verified(self) -> dict:
        """`verify()` for a caller that does not hold the lock (it takes a reader's)."""
        with self.lock(shared=True):
            return self.verify()

    def history(self) -> list[dict]:
        """Every record, oldest first, after a full verification (takes a reader's lock)."""
        with self.lock(shared=True):
            self.verify()
            return self.records()

    def records(self) -> list[dict]:
        """Every record up to the head, oldest first (callers hold the lock, and verify)."""
        return [self._record(seq) for seq in range(1, self.head().seq + 1)]

    def turn_charged(self, turn_id: str, head: Head) -> bool:
        """True when `turn_id` has been charged already (its marker, or the last record)."""
        if head.record.get("turn") == turn_id:
            return True
        return os.path.lexists(os.path.join(self.turns_dir, turn_key(turn_id)))

    # -- writing (callers hold `self.lock()`) ---------------------------------------------

    def lock(self, *, shared: bool = False, seconds: float | None = None):
        """The writer lock, or with `shared` a reader's, waited on for `seconds` at most
        (default `lock.LOCK_SECONDS`; see `lock.locked`)."""
        if not os.path.isdir(self.dir) or os.path.islink(self.dir):
            raise tampered(f"goal {self.nonce}: its ledger directory is missing or replaced")
        return locked(self.dir, shared=shared, seconds=seconds)

    def _publish(self, record: dict) -> None:
        pointer = {"seq": record["seq"], "hash": record["hash"]}
        generation = os.path.basename(self.records_dir)
        if generation != RECORDS_DIR:
            pointer[GENERATION] = generation
        data = record_file.canonical(pointer)
        record_file.replace_atomically(self.head_path, data)
        turn = record.get("turn")
        if turn:
            try:
                os.mkdir(self.turns_dir)
            except FileExistsError:
                if not os.path.isdir(self.turns_dir):
                    raise
            record_file.create_exclusive(os.path.join(self.turns_dir, turn_key(turn)), b"",
                                     durable=False)

    def settle(self) -> Head:
        """The checked head, finishing what a crash interrupted (pointer and turn marker)."""
        head = self.head()
        if self.witness is not None:
            self.witness.check(self, head)
        if head.stale_pointer or (head.record.get("turn") and not os.path.lexists(
                os.path.join(self.turns_dir, turn_key(head.record["turn"])))):
            self._publish(head.record)
            head = Head(head.record, False)
        return head

    def append(self, head: Head, kind: str, goal: dict, **fields) -> Head:
        """Write the record after `head`; the caller holds the lock and has settled."""
        record = record_file.seal({**fields, "seq": head.seq + 1, "prev": head.record["hash"],
                               "kind": kind, "at": now(), "goal": goal})
        check_transition(head.record, record, self.nonce)
        if not record_file.write_record(self.records_dir, record):
            raise tampered(f"goal {self.nonce}: record {record['seq']} appeared while locked")
        self._publish(record)
        if self.witness is not None:
            self.witness.record(self.nonce, record)
        return Head(record, False)

    def install(self, staged: Ledger) -> Head:
        """Make the chain verified in `staged` (see `stage`) this goal's, in one step: its
        records move in as a new generation and head.json is switched to it. The caller
        holds the lock and has checked that the chain keeps every record this ledger and
        its witness hold (merge.holds)."""
        taken = [int(name.rsplit(".", 1)[1]) for name in os.listdir(self.dir)
                 if name.startswith(RECORDS_DIR + ".") and
                 name.rsplit(".", 1)[1].isdigit()]
        old, seq = self.records_dir, staged.pointer()
        name = f"{RECORDS_DIR}.{max(taken, default=0) + 1}"
        os.rename(staged.records_dir, join(self.dir, name))
        discard(staged.root)
        self.records_dir = join(self.dir, name)
        head = Head(record_file.read_record(self.records_dir, seq), False)
        self._publish(head.record)
        record_file.fsync_dir(self.dir)
        discard(old)
        if self.witness is not None:
            self.witness.record(self.nonce, head.record)
        return head

    def create(self, goal: dict, **fields) -> Head:
        """Write the genesis record of a new goal directory."""
        os.makedirs(self.records_dir, exist_ok=True)
        record = record_file.seal({**fields, "seq": 1, "prev": record_file.GENESIS_PREV,
                               "kind": "activate", "at": now(), "goal": goal})
        check_transition(None, record, self.nonce)
        with self.lock():
            if not record_file.write_record(self.records_dir, record):
                raise tampered(f"goal {self.nonce}: a genesis record exists already")
            self._publish(record)
            record_file.fsync_dir(self.dir)  # head.json is a new name here
            if self.witness is not None:
                self.witness.record(self.nonce, record)
        return Head(record, False)


def _check_link(nonce: str, record: dict, before: dict) -> None:
    if record.get("prev") != before["hash"]:
        raise tampered(f"goal {nonce}: record {record['seq']} does not follow record "
                       f"{before['seq']} (reordered, replaced or removed)")


def _check_goal_fields(nonce: str, record: dict) -> None:
    goal = record.get("goal")
    if not isinstance(goal, dict) or goal.get("nonce") != nonce:
        raise tampered(f"goal {nonce}: record {record['seq']} belongs to another goal")


def check_step(nonce: str, before: dict | None, record: dict, chain_before) -> None:
    """The full verification's check of one record (already matched against its own hash):
    it seals `before` (None: it is the genesis record), is goal `nonce`'s, obeys the rules,
    and a join is exactly the join of its side onto `chain_before` (every record before
    it, oldest first)."""
    if before is None:
        if record.get("prev") != record_file.GENESIS_PREV:
            raise tampered(f"goal {nonce}: record 1 is not a genesis record")
    else:
        _check_link(nonce, record, before)
    _check_goal_fields(nonce, record)
    check_transition(before, record, nonce)
    if record.get("kind") == MERGE:
        why = merge.check(chain_before, record, nonce, check_transition)
        if why:
            raise tampered(f"goal {nonce}: record {record['seq']} (merge) {why}")


def check_chain(nonce: str, chain: list[dict]) -> dict:
    """Every record and transition of a chain held in memory (one read from a remote for a
    report, never taken into this clone's ledger), as `Ledger.verify` checks one on disk;
    the goal as the chain says it is, or the tamper error."""
    if not chain:
        raise tampered(f"goal {nonce}: the chain holds no record")
    before = None
    for seq, one in enumerate(chain, 1):
        if not isinstance(one, dict) or one.get("seq") != seq or \
                record_file.seal(one).get("hash") != one.get("hash"):
            raise tampered(f"goal {nonce}: record {seq} does not match its own hash or place")
        check_step(nonce, before, one,
                   chain[:seq - 1] if one.get("kind") == MERGE else ())  # read by joins only
        before = one
    return before["goal"]


class _Chain:
    """The first `length` records of a ledger, read when a join is checked: a verification
    that meets no merge record keeps no chain in memory (a 2,000-turn one is megabytes)."""

    def __init__(self, ledger: Ledger, length: int) -> None:
        self.ledger = ledger
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.ledger.record_at(seq + 1) for seq in range(*index.indices(self.length))]
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError(index)
        return self.ledger.record_at(index + 1)

    def __iter__(self):
        return (self.ledger.record_at(seq) for seq in range(1, self.length + 1))


def stage(ledger_root: str | os.PathLike, nonce: str, chain, seen=None) -> Ledger:
    """`chain` (records, oldest first: a list, or read one at a time) written as goal
    `nonce` of a fresh staging ledger inside `ledger_root` (same file system, so it moves
    into place with one rename) and fully verified: the way a chain forge did not write
    here (the remote's, a join) enters the ledger. With `seen` ({"seq", "hash"}), the
    chain must hold that record (merge.holds), else it was rewritten. The records are
    written without a sync each and synced once, before anything points at them."""
    staging = join(ledger_root, staging_dir_name(f"{os.getpid()}-{os.urandom(4).hex()}"))
    ledger = Ledger(staging, nonce)
    os.makedirs(ledger.records_dir)
    try:
        last, held = None, not seen
        for one in chain:
            record_file.create_exclusive(os.path.join(ledger.records_dir,
                                                  record_file.record_name(one["seq"])),
                                     record_file.canonical(one), durable=False)
            held = held or merge.mentions(one, seen.get("seq"), seen.get("hash"))
            last = one
        if last is None:
            raise tampered(f"goal {nonce}: the chain to take in holds no record")
        if not held:
            raise rewritten(nonce, seen)
        os.sync()
        ledger._publish({"seq": last["seq"], "hash": last["hash"]})
        ledger.verify()
    except BaseException:
        discard(staging)
        raise
    return ledger


def restore_fix(nonce: str) -> str:
    """The way out of a remote chain that is not forge's: publish this clone's over it."""
    return f"forge goal publish --nonce {nonce} --restore"


def rewritten(nonce: str, seen: dict) -> ForgeError:
    """The refusal for a remote chain without the head this clone last saw there."""
    return tampered(f"goal {nonce}: the remote's ledger no longer holds record "
                    f"{seen.get('seq')}, which this clone saw there (rewritten by hand, or a "
                    "remote that lost it)", restore_fix(nonce))


def discard(path: str | os.PathLike) -> None:
    """Remove a staging ledger or a records generation no head points at any more."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def repository_id(ledger_root: str | os.PathLike) -> str:
    """This repository's ledger identity, created once; every goal and binding carries it
    (every Stop of a bound session compares it)."""
    path = repository_id_file(ledger_root)
    if not os.path.lexists(path):  # every Stop asks: only the first pays a durable write
        os.makedirs(ledger_root, exist_ok=True)
        record_file.create_exclusive(path, random_uuid().replace("-", "").encode("ascii"))
    from forge_runtime import safeio

    try:  # bytes, then decoded: a text-mode "ascii" file loads a codec module per Stop
        text = safeio.read_bytes(path).decode("ascii")
    except (OSError, UnicodeDecodeError):
        raise tampered("the ledger's repository-id file cannot be read") from None
    if os.path.islink(path) or len(text.strip()) != 32:
        raise tampered("the ledger's repository-id file is not forge's")
    return text.strip()


def random_uuid() -> str:
    """A fresh random (version 4) UUID in its 36-character text form, as `str(uuid.uuid4())`.
    Built from `os.urandom` by hand: `uuid` imports `platform` and more, a few ms for the
    confirming Stop of every `/goal`. Activation ids are these."""
    value = int.from_bytes(os.urandom(16), "big")
    value = (value & ~(0xF000 << 64) & ~(0xC000 << 48)) | (4 << 76) | (0x8000 << 48)
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def new_nonce() -> str:
    """A new goal's random nonce: 32 hex digits, as `secrets.token_hex(16)` gives them
    (without importing `secrets`, which brings `random`, `hmac` and `base64`)."""
    return os.urandom(16).hex()


# -- the rules every transition obeys ----------------------------------------------------------

_FIXED = ("nonce", "objective", "objective_hash", "repository")
# the tranche's token, dollar and time ceilings, when its clock started, and the price table
# its charges are priced with (goal/budget/pricing.py): set by an activation
_TRANCHE_FIELDS = ("token_ceiling", "tranche_tokens", "minute_ceiling", "tranche_started",
                   "usd_ceiling", "tranche_usd", "prices", "plan_ceilings", "after_usage_limit")
# what the plan's readings leave on a goal (goal/budget/plan.py): only a charge carrying a reading
# moves them (an activation may note where the goal's own use starts: plan_seen, plan_host)
_PLAN_FIELDS = ("plan_seen", "plan_host", "plan_week")


def _plan_ok(old: dict, goal: dict, record: dict, kind: str) -> bool:
    """The plan's figures and the usage-limit mark follow the record: a charge's reading
    moves them as goal/budget/plan.py's `advanced` does, the host's usage limit marks a charge,
    a new tranche clears the mark; nothing else changes them."""
    from forge_runtime.goal.budget import plan

    reading = record.get("plan")
    if reading is not None and (kind != "charge" or not plan.valid(reading)
                                or _read_after(reading, record)):
        return False  # a reading from after its own charge is not a host's
    limited = record.get("usage_limit")
    if limited is not None and (kind not in ("charge", "exhaust") or limited is not True):
        return False
    if kind == "activate":
        return goal.get("plan_week", 0) == old.get("plan_week", 0) \
            and goal.get("usage_limited") is None
    if goal.get("usage_limited") != (True if limited else old.get("usage_limited")):
        return False
    expected = plan.advanced(old, reading) if reading is not None else old
    return all(goal.get(field) == expected.get(field) for field in _PLAN_FIELDS)


def _read_after(reading: dict, record: dict) -> bool:
    """A charge's reading taken after the charge itself was written (its `at`): no host's
    (goal/budget/plan.py `from_future`; the record's own time keeps the check the same at every
    later verification)."""
    from forge_runtime.goal.budget import plan

    try:
        return plan.from_future(reading, epoch(str(record.get("at"))))
    except ValueError:
        return True


def _spent_picousd(record: dict) -> int:
    """The picodollars a charge says it spent: its usage's `picousd`, which must be the sum
    of its models' (-1 when it is not); 0 for a charge no price table priced."""
    usage = record.get("usage")
    if not isinstance(usage, dict) or "picousd" not in usage:
        return 0
    from forge_runtime.goal.budget.usage import picousd

    by_model = usage.get("by_model")
    total = usage["picousd"]
    if not isinstance(total, int) or total < 0 or not isinstance(by_model, dict) \
            or total != picousd(by_model):
        return -1
    return total


def _spent_tokens(record: dict) -> int:
    usage = record.get("usage")
    if usage is None:
        return 0
    from forge_runtime.goal.budget.usage import counted

    by_model = usage.get("by_model") if isinstance(usage, dict) else None
    if not isinstance(by_model, dict) or not all(
            isinstance(spent, dict) and all(isinstance(value, int) and value >= 0
                                            for value in spent.values())
            for spent in by_model.values()) or usage.get("counted") != counted(by_model):
        return -1
    return usage["counted"]


def check_transition(before: dict | None, record: dict, nonce: str) -> None:
    """Raise the tamper error unless `record` may follow `before` under the contract."""
    goal = record.get("goal") or {}
    kind = record.get("kind")

    def refuse(why: str) -> ForgeError:
        return tampered(f"goal {nonce}: record {record.get('seq')} ({kind}) {why}")

    if goal.get("status") not in STATUSES:
        raise refuse(f"has an unknown status {goal.get('status')!r}")
    if goal.get("turn_ceiling") != TRANCHE * goal.get("activation_count", 0):
        raise refuse("has a ceiling that is not 20 x activations")
    count = goal.get("turn_count", -1)
    if not isinstance(count, int) or count < 0 or (count > goal["turn_ceiling"] and (
            kind == "charge" or before is None)):
        # past the ceiling only by joining another clone's turns (merge.py), and kept
        raise refuse("has a turn count outside 0..ceiling")
    if not isinstance(goal.get("token_count", 0), int) or goal.get("token_count", 0) < 0:
        raise refuse("has a token count that is not a count")
    if not isinstance(goal.get("picousd", 0), int) or goal.get("picousd", 0) < 0:
        raise refuse("has a dollar count that is not a count")
    if before is None:
        if kind != "activate" or goal.get("activation_count") != 1 or goal["turn_count"] != 0 \
                or goal["status"] != ACTIVE or goal.get("token_count", 0) != 0 \
                or goal.get("picousd", 0) != 0:
            raise refuse("is not a fresh activation at turn 0")
        return
    old = before["goal"]
    if any(goal.get(key) != old.get(key) for key in _FIXED):
        raise refuse("changes the goal's identity")
    if kind == MERGE:  # it adds the other clone's turns, spending, figures: merge.py's rules
        if not merge.shape_ok(before, record):
            raise refuse(f"is not a valid join onto {old['status']} at turn "
                         f"{old['turn_count']}")
        return
    spent = _spent_tokens(record) if kind in ("charge", OVERRUN) else 0
    if spent < 0:
        raise refuse("says it spent tokens its own usage does not add up to")
    if goal.get("token_count", 0) != old.get("token_count", 0) + spent:
        raise refuse("changes the token count by other than what its charge spent")
    dollars = _spent_picousd(record) if kind in ("charge", OVERRUN) else 0
    if dollars < 0:
        raise refuse("says it spent dollars its own usage does not add up to")
    if goal.get("picousd", 0) != old.get("picousd", 0) + dollars:
        raise refuse("changes the dollar count by other than what its charge spent")
    if kind != "activate" and any(goal.get(key) != old.get(key) for key in _TRANCHE_FIELDS):
        raise refuse("changes the tranche's token or time ceiling outside an activation")
    if not _plan_ok(old, goal, record, kind):
        raise refuse("changes the plan's figures or the usage-limit mark other than its "
                     "charge's reading says")
    overruns = goal.get("overrun_count", 0)
    if not isinstance(overruns, int) or isinstance(overruns, bool) or \
            overruns != old.get("overrun_count", 0) + (kind == OVERRUN):
        raise refuse("changes the over-budget turn count by other than its own record")
    counts_same = (goal["turn_count"] == old["turn_count"]
                   and goal["activation_count"] == old["activation_count"])
    same_activation = goal.get("activation_id") == old.get("activation_id")
    if kind == "charge":
        ok = (old["status"] == ACTIVE and goal["status"] == ACTIVE and same_activation
              and goal["turn_count"] == old["turn_count"] + 1
              and goal["activation_count"] == old["activation_count"]
              and isinstance(record.get("turn"), str))
    elif kind == "activate":  # one more tranche, only for an exhausted goal
        ok = ((old["status"] == EXHAUSTED or reached(old, str(record.get("at"))) is not None)
              and goal["status"] == ACTIVE
              and goal["activation_count"] == old["activation_count"] + 1
              and goal["turn_count"] == old["turn_count"] and not same_activation)
    elif kind == "reopen":
        ok = (old["status"] in (COMPLETE, CANCELLED) and goal["status"] == ACTIVE
              and counts_same and reached(old, str(record.get("at"))) is None)
    elif kind in ("bind", "checkpoint"):
        ok = counts_same and goal["status"] == old["status"] and same_activation
    elif kind == "exhaust":
        ceiling = record.get("ceiling", TURNS)
        ok = (counts_same and old["status"] == ACTIVE and goal["status"] == EXHAUSTED
              and ceiling in ALL and _reached_named(goal, record, ceiling))
    elif kind == OVERRUN:  # after the end only, and it changes nothing but what it spent
        ok = (old["status"] != ACTIVE and goal["status"] == old["status"] and counts_same
              and same_activation and isinstance(record.get("turn"), str))
    elif kind in ("complete", "cancel"):
        wanted = COMPLETE if kind == "complete" else CANCELLED
        ok = counts_same and old["status"] in (ACTIVE, EXHAUSTED) and goal["status"] == wanted
    else:
        ok = False
    if not ok:
        raise refuse(f"is not a valid step from {old['status']} at turn {old['turn_count']}")


def _reached_named(goal: dict, record: dict, ceiling: str) -> bool:
    """An exhaustion's named ceiling is one the goal has reached at the record's time."""
    if ceiling == TURNS:
        return goal["turn_count"] >= goal["turn_ceiling"]
    if ceiling == TOKENS:
        tokens = goal.get("token_ceiling")
        return isinstance(tokens, int) and goal.get("token_count", 0) >= tokens
    if ceiling == USD:
        return usd_reached(goal)
    if ceiling == USAGE_LIMIT:
        return usage_limited(goal)
    at = record.get("at")
    if not isinstance(at, str):
        return False
    if ceiling != MINUTES:
        return ceiling in plan_reached(goal, at)
    minutes = goal.get("minute_ceiling")
    return isinstance(minutes, int) and (minutes_used(goal, at) or 0) >= minutes


def goal_nonces(project) -> list[str]:
    """Every goal in the repository's ledger, most recently changed first."""
    root = project.ledger_root
    if not os.path.isdir(root):
        return []
    found = [(os.lstat(head_file(root, name)).st_mtime_ns, name)
             for name in goal_dir_names(root)]
    return [name for _, name in sorted(found, reverse=True)]
