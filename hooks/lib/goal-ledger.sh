#!/bin/sh
# forge goal-ledger helper (seed contract): goal-ledger.sh activate|charge|verify [options]
#   e.g. .forge/hooks/lib/goal-ledger.sh activate --project "$PWD" --state .forge/local/state.md
# A thin wrapper: the rules live in one place, `forge ledger ...` (forge_runtime/goal/).
# Uses $FORGE_PYTHON when set, else the `forge` command, else python3 -m forge_runtime.
if [ -n "${FORGE_PYTHON:-}" ]; then
    exec "$FORGE_PYTHON" -m forge_runtime ledger "$@"
fi
if command -v forge >/dev/null 2>&1; then
    exec forge ledger "$@"
fi
exec python3 -m forge_runtime ledger "$@"
