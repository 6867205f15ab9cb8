"""The team report as a page (`forge goal report --remote NAME --html`): the totals per
person, branch, model and week drawn as bars and given in tables, every goal as a row, and
the chains that did not verify, listed and counted nowhere.

Self-contained as the single-goal page is (report_html.py): inline SVG and CSS, no script,
no request anywhere (its Content-Security-Policy says so), and every string escaped: an
objective, a name or a branch is whatever another clone wrote.
"""

from __future__ import annotations

import html

from forge_runtime.goal.budget.plan import percent
from forge_runtime.goal.views.gauge import dollars_text, tokens_text
from forge_runtime.goal.views.report_html import PALETTE, STYLE
from forge_runtime.goal.views.report_team import GROUPS

BAR_WIDTH, ROW = 360, 22


def _bars(group: str, found: dict) -> str:
    """One horizontal bar per name: its dollars where any were priced, else its tokens."""
    priced = any(one["picousd"] for one in found.values())
    measure, label = ("picousd", dollars_text) if priced else ("tokens", tokens_text)
    top = max((one[measure] for one in found.values()), default=0) or 1
    height = max(len(found), 1) * ROW + 8
    parts = [f'<svg role="img" aria-label="{"dollars" if priced else "tokens"} per {group}" '
             f'width="{BAR_WIDTH + 420}" height="{height}">']
    for index, (name, one) in enumerate(found.items()):
        y = 4 + index * ROW
        width = one[measure] * BAR_WIDTH / top
        parts.append(f'<text x="0" y="{y + 14}" class="name">{html.escape(name[:40])}</text>'
                     f'<rect x="300" y="{y}" width="{width:.1f}" height="{ROW - 6}" '
                     f'fill="{PALETTE[index % len(PALETTE)]}"><title>{html.escape(name)} · '
                     f'{label(one[measure])}</title></rect>'
                     f'<text x="{300 + width + 6:.1f}" y="{y + 14}" class="axis">'
                     f'{label(one[measure])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _figures(one: dict, turns: bool = True) -> str:
    cells = [tokens_text(one["tokens"]), dollars_text(one["picousd"])]
    if turns:
        cells = [str(one["turns"]), *cells, percent(one["plan"])]
    return "".join(f"<td>{cell}</td>" for cell in cells)


def _group_table(group: str, found: dict) -> str:
    turns = group != "model"
    head = "<th>turns</th><th>tokens</th><th>dollars</th><th>plan share</th>" if turns \
        else "<th>tokens</th><th>dollars</th>"
    rows = "".join(f"<tr><td>{html.escape(name)}</td><td>{one['goals']}</td>"
                   f"{_figures(one, turns)}</tr>" for name, one in found.items())
    return (f'<table id="per-{group}"><tr><th>{group}</th><th>goals</th>{head}</tr>'
            f"{rows}</table>")


def _goal_row(one: dict) -> str:
    esc = html.escape
    cells = [one["activated"], one["nonce"][:12], one["objective"], ", ".join(one["people"]),
             ", ".join(one["branches"]), ", ".join(one["hosts"]), ", ".join(one["models"])]
    return ("<tr>" + "".join(f"<td>{esc(str(cell))}</td>" for cell in cells)
            + _figures(one) + f"<td>{esc(one['ended'])}</td><td>{esc(one['where'])}</td></tr>")


def render(report: dict) -> str:
    """The page for `report_team.build(...)`'s report."""
    esc = html.escape
    every = report["totals"]["all"]
    since = f" activated since {report['since']}" if report.get("since") else ""
    sections = [
        f"<h1>Goals on {esc(report['remote'])} and this clone{esc(since)}</h1>",
        f'<p id="total">{every["goals"]} goal(s) · {every["turns"]} turns · '
        f'{tokens_text(every["tokens"])} tokens · {dollars_text(every["picousd"])} · '
        f'plan share {percent(every["plan"])} · {len(report["refused"])} refused</p>',
    ]
    for group in GROUPS:
        found = report["totals"][group]
        sections += [f"<h2>Per {group}</h2>", _bars(group, found), _group_table(group, found)]
    sections += [
        "<h2>Goals</h2>",
        '<table id="goals"><tr><th>activated</th><th>goal</th><th>objective</th><th>by</th>'
        "<th>branch</th><th>host</th><th>model</th><th>turns</th><th>tokens</th>"
        "<th>dollars</th><th>plan share</th><th>ended</th><th>from</th></tr>"
        + "".join(_goal_row(one) for one in report["goals"]) + "</table>",
    ]
    if report["refused"]:
        sections += [
            "<h2>Refused: did not verify, counted nowhere</h2>",
            '<table id="refused"><tr><th>goal</th><th>where</th><th>why</th><th>fix</th></tr>'
            + "".join(f"<tr><td>{esc(found['nonce'])}</td><td>{esc(found['where'])}</td>"
                      f"<td>{esc(found['why'])}</td><td><code>{esc(found['fix'])}</code></td>"
                      "</tr>" for found in report["refused"]) + "</table>"]
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'\">"
            f"<title>forge goals on {esc(report['remote'])}</title>"
            f"<style>{STYLE}.name {{ font-size: 12px; }}</style>"
            f"</head><body>{''.join(sections)}</body></html>\n")
