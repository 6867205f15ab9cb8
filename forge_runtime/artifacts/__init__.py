"""Artifacts: requirement documents, decisions and evidence as Markdown under `.forge/artifacts/`.

The Markdown files are the source of truth. Everything else here (the index, the computed
`stale` status, the score) is derived from them on every read, so a file edited by hand, a
merge or a checkout never leaves forge believing something the files do not say.

Modules, one job each: `model` (kinds, statuses, relations, the artifact record),
`frontmatter` (YAML front matter in and out), `store` (files, IDs, the index), `templates`,
`lifecycle`, `validate`, `score`, `links`, `guide` (the next step for an artifact), `route`,
`brief` (a PRD from the frozen brief), `claims` and `remote` (who works on what, on one disk
or through a git remote), `dispatch`, `workspace` (the context of one call), and the
operations themselves: `authoring` (route, new, link, unlink, and `record_evidence`, the
public way to record evidence for an artifact), `reading`, `transitions` and `work`.
"""
