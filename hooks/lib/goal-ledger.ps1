# forge goal-ledger helper (seed contract): goal-ledger.ps1 activate|charge|verify [options]
#   e.g. .forge/hooks/lib/goal-ledger.ps1 activate --project $PWD --state .forge/local/state.md
# A thin wrapper: the rules live in one place, `forge ledger ...` (forge_runtime/goal/).
# Uses $env:FORGE_PYTHON when set, else the `forge` command, else python -m forge_runtime.
$ErrorActionPreference = 'Stop'
if ($env:FORGE_PYTHON) {
    & $env:FORGE_PYTHON -m forge_runtime ledger @args
} elseif (Get-Command forge -ErrorAction SilentlyContinue) {
    & forge ledger @args
} else {
    & python -m forge_runtime ledger @args
}
exit $LASTEXITCODE
