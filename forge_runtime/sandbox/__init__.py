"""forge's kernel layer: the host's own Bash sandbox and deny rules, in a real settings scope.

Shell-text analysis (the guard) cannot be complete. On Linux, Claude Code's Bash sandbox
(bubblewrap plus socat) turns a `permissions.deny` rule `Edit(<path>/**)` into a read-only
bind for every command, however obfuscated, and the same rule denies the Write and Edit
tools in every permission mode. A plugin's own settings file cannot carry this, so
`forge sandbox enable` merges it into a settings file the host reads.

Modules, each with one job:
    scopes   which settings files the host reads, and in which order they win
    tools    whether bubblewrap (>= 0.8.0) and socat are there
    layer    what forge adds to a settings file, and the record that lets `disable` undo it
    posture  what is in force across every scope, its gaps, and the hint for the worst one
"""
