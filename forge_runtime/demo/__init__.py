"""`forge demo`: a real Claude Code session, offline, showing what forge does.

The demo is a list of small steps (`steps.STEPS`), run in order against one `Demo`: a
temporary git project with forge installed and the forge plugin loaded into the real host,
whose model is a bundled script (`script.yaml` here). Each step does real work and returns
a `Section` (a title and a few plain lines) for the report.

Adding a step (for example when a new forge feature lands):
1. Write `def my_step(demo: Demo) -> Section` in `steps.py`. Use `demo.session(prompt,
   script="my-script")` to run a host session against `forge_runtime/demo/my-script.yaml`,
   `demo.forge("goal", "status", "--json")` to run a forge command in the project (its
   text output is checked by the hint-contract step), and `demo.project` for files.
   Raise `DemoFailed("what went wrong")` when what you show did not happen.
2. Put it into `STEPS` where it belongs in the story; keep the hint-contract step last.
3. Add a check to tests/host/test_demo_session.py for what the report must now say.
"""
