#!/bin/sh
# A server-side pre-receive hook that lets forge's own pushes to refs/forge/* through and
# refuses a rewrite: forge only ever moves those refs forward (each snapshot sits on the
# one the remote held), so any delete or non-fast-forward update there is refused.
# Install it as hooks/pre-receive of the bare repository (self-hosted git, GitLab server
# hooks, GitHub Enterprise Server pre-receive hooks). See docs/remote-ledger.md.
zero=0000000000000000000000000000000000000000
status=0
while read -r old new ref; do
    case "$ref" in refs/forge/*) ;; *) continue ;; esac
    if [ "$new" = "$zero" ]; then
        echo "refused: $ref may not be deleted (forge's goal ledger)" >&2; status=1
    elif [ "$old" != "$zero" ] && ! git merge-base --is-ancestor "$old" "$new"; then
        echo "refused: $ref may only move forward (forge's goal ledger)" >&2; status=1
    fi
done
exit $status
