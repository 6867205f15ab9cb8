"""One goal's story as a page a person opens in a browser (`forge goal report --html`).

The same story report.py tells in lines, drawn: turns, tokens and dollars per turn by model
(stacked bars, one colour per model), where each tranche began and how it ended, the stuck
warnings, the gates, where the goal stands, and each running total against the ceiling the
goal had on it (turns, tokens, dollars, the plan's shares), so where it stopped is seen.
One self-contained file: inline SVG and CSS, no script, no request anywhere (a
Content-Security-Policy says so), every string from the ledger escaped (an objective is
whatever a person typed).
"""

from __future__ import annotations

import html

from forge_runtime.goal.budget.plan import percent
from forge_runtime.goal.budget.usage import counted
from forge_runtime.goal.views.gauge import dollars_text, tokens_text
from forge_runtime.goal.views.report import CEILING_WORDS

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")
BAR, GAP, HEIGHT = 18, 4, 160


def _colours(models: list[str]) -> dict[str, str]:
    return {model: PALETTE[n % len(PALETTE)] for n, model in enumerate(models)}


def _turns(told: dict) -> list[dict]:
    return [{**turn, "tranche": tranche["activation"]} for tranche in told["tranches"]
            for turn in tranche["turns"]]


def _chart(turns: list[dict], colours: dict, measure, label, title: str) -> str:
    """Stacked bars, one per turn, one segment per model; a dashed line where a tranche
    begins; a red mark over a turn that carried a stuck warning."""
    totals = [sum(measure(spent) for spent in turn["by_model"].values()) for turn in turns]
    top = max(totals, default=0) or 1
    width = max(len(turns), 1) * (BAR + GAP) + 60
    parts = [f'<svg role="img" aria-label="{html.escape(title)}" width="{width}" '
             f'height="{HEIGHT + 40}" viewBox="0 0 {width} {HEIGHT + 40}">',
             f'<text x="0" y="12" class="axis">{html.escape(label(top))}</text>']
    previous = None
    for index, turn in enumerate(turns):
        x = 50 + index * (BAR + GAP)
        if turn["tranche"] != previous and previous is not None:
            parts.append(f'<line x1="{x - GAP / 2}" y1="14" x2="{x - GAP / 2}" '
                         f'y2="{HEIGHT + 20}" class="tranche"/>')
        previous = turn["tranche"]
        y = HEIGHT + 20
        for model, spent in sorted(turn["by_model"].items()):
            size = measure(spent) * HEIGHT / top
            if size <= 0:
                continue
            y -= size
            parts.append(f'<rect x="{x}" y="{y:.1f}" width="{BAR}" height="{size:.1f}" '
                         f'fill="{colours[model]}"><title>turn {turn["turn"]} · '
                         f'{html.escape(model)} · {html.escape(label(measure(spent)))}'
                         '</title></rect>')
        if turn["stuck"]:
            parts.append(f'<circle cx="{x + BAR / 2}" cy="{y - 6:.1f}" r="4" class="stuck">'
                         f'<title>stuck warning at turn {turn["turn"]}</title></circle>')
        parts.append(f'<text x="{x + BAR / 2}" y="{HEIGHT + 34}" class="tick">'
                     f'{turn["turn"]}</text>')
    parts.append("</svg>")
    return "".join(parts)


CEILING_WIDTH, CEILING_HEIGHT = 640, 140


def _ceiling_chart(name: str, series: list[list], label, stopped: str) -> str:
    """The running total of one measure (a line) against its ceiling (a dashed step line,
    raised by each tranche; left out where a tranche had none), one point per record, and
    a mark where the chain ends, with how it stopped."""
    top = max([total for total, _ in series] +
              [ceiling for _, ceiling in series if isinstance(ceiling, int)], default=0) or 1
    steps = max(len(series) - 1, 1)

    def x(index: int) -> float:
        return 60 + index * (CEILING_WIDTH - 80) / steps

    def y(value: int) -> float:
        return 14 + (1 - value / top) * CEILING_HEIGHT

    total = " ".join(f"{x(n):.1f},{y(value):.1f}" for n, (value, _) in enumerate(series))
    ceilings, run = [], []
    for n, (_, ceiling) in enumerate(series):
        if isinstance(ceiling, int):
            run += [f"{x(max(n - 1, 0)) if run else x(n):.1f},{y(ceiling):.1f}",
                    f"{x(n):.1f},{y(ceiling):.1f}"]
        elif run:
            ceilings.append(run)
            run = []
    if run:
        ceilings.append(run)
    end_x, (end_value, end_ceiling) = x(len(series) - 1), series[-1]
    parts = [f'<svg role="img" aria-label="{html.escape(name)} against its ceiling" '
             f'class="ceiling-chart" width="{CEILING_WIDTH + 260}" '
             f'height="{CEILING_HEIGHT + 34}">',
             f'<text x="0" y="12" class="axis">{html.escape(label(top))}</text>',
             f'<text x="0" y="{CEILING_HEIGHT + 14}" class="axis">0</text>']
    parts += [f'<polyline points="{" ".join(one)}" class="limit"/>' for one in ceilings]
    parts.append(f'<polyline points="{total}" class="total"/>')
    stop = f"{label(end_value)}" + (f" of {label(end_ceiling)}"
                                     if isinstance(end_ceiling, int) else "")
    parts.append(f'<circle cx="{end_x:.1f}" cy="{y(end_value):.1f}" r="4" class="end">'
                 f"<title>{html.escape(stopped)}: {html.escape(stop)}</title></circle>"
                 f'<text x="{end_x + 8:.1f}" y="{y(end_value) + 4:.1f}" class="axis">'
                 f"{html.escape(stop)}</text>"
                 f'<text x="60" y="{CEILING_HEIGHT + 30}" class="axis">record 1 to '
                 f"{len(series)}: {html.escape(stopped)}</text></svg>")
    return "".join(parts)


def _ceilings(told: dict, stopped: str) -> list[str]:
    """One chart per measure the goal had a ceiling on, turns always."""
    points = told.get("running") or []
    labels = {"turns": str, "tokens": tokens_text, "dollars": dollars_text}
    sections = []
    for name in (points[0] if points else {}):
        if name in ("seq", "at"):
            continue
        series = [point[name] for point in points]
        if name != "turns" and not any(isinstance(c, int) for _, c in series):
            continue  # a ceiling the goal never had
        sections += [f'<h3 id="ceiling-{name.replace(" ", "-")}">{html.escape(name)}</h3>',
                     _ceiling_chart(name, series, labels.get(name, percent), stopped)]
    return sections


def _tokens(spent: dict) -> int:
    return counted({"m": spent})


def _picos(spent: dict) -> int:
    return spent.get("picousd", 0)


def _ended_words(ended: dict) -> str:
    """How a tranche ended, as its row and the ceiling charts say it."""
    how = ended.get("how", "running")
    if how == "exhausted":
        ceiling = ended.get("ceiling")
        how = f"exhausted on its {CEILING_WORDS.get(ceiling, ceiling)} ceiling"
    return how


def render(told: dict) -> str:
    """The page for `report.story(...)`'s story (plus `gates`, when the caller added it)."""
    goal = told["goal"]
    turns = _turns(told)
    models = sorted({model for turn in turns for model in turn["by_model"]})
    colours = _colours(models)
    priced = "picousd" in goal
    esc = html.escape
    rows = []
    for tranche in told["tranches"]:
        how = _ended_words(tranche["ended"] or {})
        rows.append(
            f"<tr><td>{tranche['activation']}</td><td>{esc(tranche['started'])}</td>"
            f"<td>{len(tranche['turns'])}</td><td>{tokens_text(tranche['tokens'])}</td>"
            + (f"<td>{dollars_text(tranche['picousd'])}</td>" if priced else "")
            + f"<td>{tranche['minutes']}</td><td>{esc(how)}</td>"
            f"<td>{esc(tranche.get('checkpoint') or '')}</td></tr>")
    legend = "".join(f'<li><span class="swatch" style="background:{colours[m]}"></span>'
                     f"{esc(m)}</li>" for m in models)
    per_model = "".join(
        f"<tr><td>{esc(model)}</td>"
        + "".join(f"<td>{tokens_text(spent.get(field, 0))}</td>"
                  for field in ("input", "output", "cache_creation", "cache_read"))
        + (f"<td>{dollars_text(spent.get('picousd', 0))}</td>" if priced else "")
        + "</tr>" for model, spent in sorted(told["by_model"].items()))
    stuck = [turn["turn"] for turn in turns if turn["stuck"]]
    status = (f"{esc(str(goal.get('status')))} at {goal.get('turn_count')} of "
              f"{goal.get('turn_ceiling')} turns · {tokens_text(goal.get('token_count', 0))} "
              "tokens" + (f" · {dollars_text(goal['picousd'])}" if priced else ""))
    dollar_head = "<th>dollars</th>" if priced else ""
    sections = [
        f"<h1>Goal {esc(str(goal.get('nonce')))}</h1>",
        f'<p class="objective">{esc(str(goal.get("objective")))}</p>',
        f'<p id="status">{status}</p>',
        f'<p id="gates">gates: {esc(told["gates"])}</p>' if told.get("gates") else "",
        f'<p id="prices">prices: {esc(str((goal.get("prices") or {}).get("version")))} '
        "(API prices, whatever the plan)</p>" if priced else "",
        "<h2>Tokens per turn</h2>",
        _chart(turns, colours, _tokens, lambda n: f"{tokens_text(n)} tok", "tokens per turn"),
    ]
    if priced:
        sections += ["<h2>Dollars per turn</h2>",
                     _chart(turns, colours, _picos, dollars_text, "dollars per turn")]
    last = (told["tranches"][-1]["ended"] or {}) if told["tranches"] else {}
    sections += [
        f'<ul class="legend">{legend}</ul>',
        f'<p id="stuck">stuck warnings at turns {", ".join(map(str, stuck))}</p>'
        if stuck else "",
        "<h2>Against its ceilings</h2>", *_ceilings(told, _ended_words(last)),
        "<h2>Tranches</h2>",
        f'<table id="tranches"><tr><th>#</th><th>from</th><th>turns</th><th>tokens</th>'
        f"{dollar_head}<th>minutes</th><th>ended</th><th>next step then</th></tr>"
        f"{''.join(rows)}</table>",
        "<h2>By model</h2>",
        f'<table id="models"><tr><th>model</th><th>in</th><th>out</th><th>cache write</th>'
        f"<th>cache read</th>{dollar_head}</tr>{per_model}</table>",
    ]
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'\">"
            f"<title>forge goal {esc(str(goal.get('nonce')))}</title><style>{STYLE}</style>"
            f"</head><body>{''.join(sections)}</body></html>\n")


STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 20px; margin-bottom: 0; } h2 { font-size: 16px; margin-top: 1.6em; }
.objective { font-size: 16px; margin-top: 0.2em; }
table { border-collapse: collapse; } td, th { padding: 2px 10px; text-align: left; }
tr:nth-child(even) { background: #f4f4f4; }
.legend { list-style: none; padding: 0; display: flex; gap: 1.2em; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 4px; }
.axis, .tick { font-size: 10px; fill: #666; } .tick { text-anchor: middle; }
.tranche { stroke: #999; stroke-dasharray: 4 3; } .stuck { fill: #d62728; }
.total { fill: none; stroke: #4e79a7; stroke-width: 2; }
.limit { fill: none; stroke: #e15759; stroke-width: 1.5; stroke-dasharray: 6 3; }
.end { fill: #e15759; } h3 { font-size: 14px; margin: 1em 0 0.2em; }
"""
