"""What no agent may write, as plain facts every core package may read.

    paths.py        the protected paths of a project, and how a path an agent names is
                    matched against them
    host_loaded.py  the files each host loads as code or settings, at every scope
    guard_file.py   the project's `.forge/guard.yaml`: its schema, read and checked

The guard judges tool calls against these, the sandbox binds them read-only, the gates
and the goal read them; none of those needs the others for it. Nothing is imported at
package level.
"""
