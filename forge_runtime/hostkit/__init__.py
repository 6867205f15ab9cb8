"""The host kit: run the real Claude Code CLI offline against a scripted model.

    script.py         rules that answer model requests by their content (+ script.schema.json)
    server.py         the Messages API server on 127.0.0.1 that plays the model
    runner.py         `Host`: a fresh HOME + the server + plugins; `Host.run` is one session
    marketplace.py    forge installed as a person does: marketplace add + plugin install
    netns.py          loopback-only network and PID namespace for a session, where allowed
    hookrecord.py     records forge's hook invocations (stdin, stdout, exit, duration)
    binary.py         finds the CLI bundled with claude-agent-sdk, or $FORGE_CLAUDE_BIN, and
                      fetches a build the host contract was measured on into the cache
    responses.py      the same scripts as OpenAI's Responses API, for Codex CLI
    codex.py          `CodexHost`: a fresh CODEX_HOME + the server; `exec` and the TUI
    codex_binary.py   the pinned Codex CLI (or the newest) from npm, cached in the user's
                      cache dir
    pytest_plugin.py  fixtures: `claude_host`, `codex_host`, `project`, `claude_bin`,
                      `codex_bin`

Nothing is imported here: `hookrecord` runs on every hook call and must stay light.
"""

# Where hookrecord.py appends its records (runner.py and codex.py set it for a session).
LOG_ENV = "FORGE_HOSTKIT_HOOK_LOG"
