"""``report.md`` and a self-contained ``report.html`` of a suite run, with plots.

:func:`write_reports` writes ``report.json`` on every call (the run's durable record; see
:mod:`dpverify.reporting.report`) and, once the run is over (``status`` other than ``"running"``), the plots in
``<out>/plots/`` -- the ε found against the claim for every entry, the privacy-loss histogram on the witness
pair of each statistical entry that found a violation or did not match its expectation (a passing entry's
histogram is sampling noise around the claim; drawing all of them would cost the default run seconds), each
theorem's estimate and interval against its bound over the sweep -- then
``report.md`` (plots referenced as files) and ``report.html`` (plots embedded, no external resource: one file to
attach to a review).  Plots are redrawn from the records each time, so a resumed or re-run report never shows a
stale picture.  Without matplotlib (the ``plots`` extra) the pages say so and carry no plots.

The wording rule holds on every page: ``pass`` is *no violation detected at this budget*, never *is private*;
``holds`` is evidence for the inputs checked, not a proof.
"""

from __future__ import annotations

import base64
import html
import importlib.util
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dpverify.jsonsafe import format_number as _fmt
from dpverify.reporting.report import report_dict, summarize, write_report_json, write_text_atomic
from dpverify.reporting.table_cells import claim_cell, found_cell, found_legend, ok_cell
from dpverify.suites import EntryOutcome

__all__ = ["write_reports", "render_markdown", "render_html", "draw_plots", "statistical_witness", "plain_witness"]

Block = tuple[Any, ...]
_WORDING = ("`pass` means no violation detected at this budget, never that the mechanism is private; `holds` "
            "means the theorem's bound was met on the inputs checked, at the stated confidence, not a proof.")


def draw_plots(out_dir: Path, records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Draw every plot of the report into ``out_dir/plots``; ``{entry name or "summary": relative path}``."""
    from dpverify.reporting.plots import matplotlib_available, plot_epsilon_summary, plot_loss_histogram, plot_theorem

    if not matplotlib_available():
        return {}
    plots: dict[str, str] = {}
    summary = plot_epsilon_summary(records, out_dir / "plots" / "epsilon_summary.png")
    if summary is not None:
        plots["summary"] = "plots/epsilon_summary.png"
    for r in records:
        name, rel = f"{r['suite']}/{r['id']}", f"plots/{r['suite']}__{r['id']}.png"
        drawn = None
        if r.get("kind") == "theorem" and r.get("details") and r.get("outcome") != "error":
            drawn = plot_theorem(r["details"], out_dir / rel)
        elif r.get("kind") == "statistical" and r.get("details") and (r["outcome"] == "violation"
                                                                        or not r.get("matched")):
            drawn = plot_loss_histogram(r, out_dir / rel)  # witnesses of violations and surprises only
        if drawn is not None:
            plots[name] = rel
    return plots


def _entry_blocks(o: EntryOutcome, record: Mapping[str, Any], plots: Mapping[str, str]) -> list[Block]:
    mark = ok_cell(o)
    blocks: list[Block] = [("h3", f"{o.name}: {o.outcome} (expected {o.expectation}) {mark}"),
                           ("p", f"kind `{o.kind}`, `{o.mechanism}`, claim {claim_cell(o)}, seed {o.seed}, "
                                 f"{o.seconds:.2f} s")]
    details = record.get("details") or {}
    if o.outcome == "error":
        blocks.append(("pre", o.error or ""))
        return blocks
    if o.kind == "theorem":
        blocks.append(("p", f"Claim checked: {details.get('statement', '-')}"))
        blocks.append(("p", details.get("summary", "-")))
    elif o.kind in ("statistical", "exact"):
        true = "" if o.true_epsilon is None else f"; true ε {_fmt(o.true_epsilon)}"
        blocks.append(("p", f"ε found: {found_cell(o)} (claim {claim_cell(o)}{true})"))
    elif details.get("summary"):
        blocks.append(("p", str(details["summary"])))
    if record.get("witness"):
        witness = (statistical_witness(record) if o.kind == "statistical" else None) or plain_witness(record["witness"])
        blocks.append(("pre", witness))
    if o.name in plots:
        blocks.append(("img", plots[o.name], f"plot of {o.name}"))
    return blocks


def statistical_witness(record: Mapping[str, Any]) -> str | None:
    """A statistical entry's witness as ``print(result)`` words it: the verdict sentence, then the event's counts
    under both inputs (``None`` when the record lacks them)."""
    w, claim = record.get("witness") or {}, record.get("claim") or {}
    try:
        n, k_num, k_den = int(w["samples"]), int(w["count_num"]), int(w["count_den"])
        n_den = int(w.get("samples_den", n))
        lb, p_lo, p_hi = (float(w[k]) for k in ("epsilon_lower_bound", "p_num_low", "p_den_high"))
    except (KeyError, TypeError, ValueError):
        return None
    delta = float(claim.get("delta") or 0.0)
    stated = f"ε = {_fmt(claim.get('epsilon'))}" + (f", δ = {delta:g}" if delta > 0 else "")
    where = f"witness pair '{w.get('pair_label')}' direction {w.get('direction')}, event {w.get('event')}"
    never = f" (never observed in {n_den} samples under x')" if k_den == 0 and k_num > 0 else ""
    if record.get("outcome") == "violation":
        head = f"VIOLATION of the claim {stated}: true ε ≥ {lb:.4g}, {where}{never}; {n} fresh samples per input."
    else:
        head = (f"No violation of the claim {stated} detected; the strongest event found gives ε ≥ {lb:.4g}: "
                f"{where}; {n} fresh samples per input.")
    return "\n".join([
        head,
        f"  P[M(x) ∈ S] ≥ {p_lo:.4g} ({k_num} of {n}) with x = {json.dumps(w.get('numerator_input'))}",
        f"  P[M(x') ∈ S] ≤ {p_hi:.4g} ({k_den} of {n_den}) with x' = {json.dumps(w.get('denominator_input'))}",
    ])


def plain_witness(witness: Any, limit: int = 1500) -> str:
    """Any kind's witness, one ``key: value`` per line (values as compact JSON, cut at ``limit`` characters)."""
    if not isinstance(witness, Mapping):
        return json.dumps(witness, ensure_ascii=False)[:limit]
    lines = [f"{k}: {json.dumps(v, ensure_ascii=False, separators=(', ', ': '))}" for k, v in witness.items()]
    return "\n".join(line if len(line) <= 200 else line[:197] + "..." for line in lines)[:limit]


def _workers_text(doc: Mapping[str, Any]) -> str:
    """How the run sampled: entries side by side (``--jobs``) and sampling processes per entry (``--workers``)."""
    jobs, workers = doc.get("jobs"), doc.get("workers")
    if doc.get("scheduler"):
        per_entry = f"on the Dask cluster {doc['scheduler']}"
    elif workers is not None:
        per_entry = str(workers)
    elif isinstance(jobs, int) and jobs > 1:
        per_entry = "1"
    else:
        per_entry = f"all cores ({os.cpu_count() or 1})"
    side = f"{jobs} entries side by side, " if isinstance(jobs, int) and jobs > 1 else ""
    return f"{side}sampling processes per entry: {per_entry}"


def _time_text(doc: Mapping[str, Any], summed: float) -> str:
    wall = doc.get("wall_seconds")
    jobs = doc.get("jobs")
    text = f"wall time {float(wall):.1f} s; " if isinstance(wall, (int, float)) else ""
    text += f"{summed:.1f} s summed over the entries"
    if isinstance(jobs, int) and jobs > 1:
        text += f" (they ran {jobs} side by side, so the sum exceeds the wall time)"
    return text


def _blocks(doc: Mapping[str, Any], outcomes: Sequence[EntryOutcome], plots: Mapping[str, str]) -> list[Block]:
    s = summarize(outcomes)
    meta = (f"status **{doc['status']}**, mode {doc['mode']}, run seed {doc['seed']}; {_workers_text(doc)}; "
            f"created {doc['created']}, dpverify {doc['dpverify_version']}, Python {doc['python']} on "
            f"{doc['platform']}")
    counts = (f"{s['matched']}/{s['entries']} entries as expected; {s['mismatched']} mismatched, {s['errors']} "
              f"errors, {s['not_run']} not run; {_time_text(doc, s['seconds'])}")
    blocks: list[Block] = [("h1", "dpverify report"), ("p", meta), ("p", counts), ("p", _WORDING)]
    if doc.get("plots_failed"):
        blocks.append(("p", f"No plots: drawing them failed ({doc['plots_failed']})."))
    elif not plots and importlib.util.find_spec("matplotlib") is None:
        blocks.append(("p", 'No plots: matplotlib is not installed (pip install "dpverify[plots]").'))
    header = ("entry", "kind", "claim", "found", "outcome", "expected", "ok", "samples", "seconds")
    rows = [(o.name, o.kind, claim_cell(o), found_cell(o), o.outcome, o.expectation, ok_cell(o),
             "-" if o.samples is None else str(o.samples), "-" if o.outcome == "not-run" else f"{o.seconds:.2f}")
            for o in outcomes]
    blocks += [("h2", "Results"), ("table", header, rows)]
    legend = found_legend([o.kind for o in outcomes if o.outcome not in ("not-run", "error")])
    if legend:
        blocks.append(("p", legend))
    if "summary" in plots:
        blocks += [("h2", "ε found against the claim"),
                   ("p", "Lower confidence bounds (statistical) and exact losses (exact) against each entry's "
                         "claimed ε; red bars exceed the claim."),
                   ("img", plots["summary"], "epsilon found against the claim")]
    blocks.append(("h2", "Entries (mismatches and errors first)"))
    by_name = {f"{r['suite']}/{r['id']}": r for r in doc["entries"]}
    ordered = sorted(outcomes, key=lambda o: (o.matched or o.outcome == "not-run", 0))
    for o in ordered:
        if o.outcome != "not-run":
            blocks += _entry_blocks(o, by_name[o.name], plots)
    return blocks


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(doc: Mapping[str, Any], outcomes: Sequence[EntryOutcome], plots: Mapping[str, str]) -> str:
    """``report.md``: the run's metadata, the results table and one section per entry (plots as files)."""
    out: list[str] = []
    for b in _blocks(doc, outcomes, plots):
        kind = b[0]
        if kind in ("h1", "h2", "h3"):
            out += ["#" * int(kind[1]) + " " + b[1], ""]
        elif kind == "p":
            out += [b[1], ""]
        elif kind == "pre":
            out += ["```", b[1], "```", ""]
        elif kind == "img":
            out += [f"![{b[2]}]({b[1]})", ""]
        elif kind == "table":
            out.append("| " + " | ".join(b[1]) + " |")
            out.append("|" + "---|" * len(b[1]))
            out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b[2]]
            out.append("")
    return "\n".join(out)


_CSS = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222;
line-height:1.4}
.table{overflow-x:auto;max-width:100%}table{border-collapse:collapse;font-size:.85em}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
tr.bad td{background:#fde2e2}pre{background:#f6f6f6;padding:.6em;font-size:.85em;white-space:pre-wrap;
overflow-wrap:anywhere}p{overflow-wrap:anywhere}
img{max-width:100%;height:auto;border:1px solid #eee}h3{margin-top:1.6em;overflow-wrap:anywhere}
code{background:#f2f2f2}"""


def _inline(text: str) -> str:
    """Escape, and render `code` spans."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def render_html(doc: Mapping[str, Any], outcomes: Sequence[EntryOutcome], plots: Mapping[str, str],
                out_dir: Path) -> str:
    """``report.html``: the same content as the markdown, one self-contained file (plots embedded as data URIs)."""
    body: list[str] = []
    for b in _blocks(doc, outcomes, plots):
        kind = b[0]
        if kind in ("h1", "h2", "h3"):
            body.append(f"<{kind}>{_inline(b[1])}</{kind}>")
        elif kind == "p":
            body.append(f"<p>{_inline(b[1]).replace('**', '')}</p>")
        elif kind == "pre":
            body.append(f"<pre>{html.escape(b[1])}</pre>")
        elif kind == "img":
            data = base64.b64encode((out_dir / b[1]).read_bytes()).decode("ascii")
            body.append(f'<p><img alt="{html.escape(b[2])}" src="data:image/png;base64,{data}"></p>')
        elif kind == "table":
            head = "".join(f"<th>{html.escape(h)}</th>" for h in b[1])
            rows = []
            for row in b[2]:
                bad = ' class="bad"' if row[6] == "✗" else ""
                rows.append(f"<tr{bad}>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
            body.append(f'<div class="table"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
                        "</table></div>")
    title = f"dpverify report ({doc['status']}, {doc['created']})"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_reports(out_dir: str | Path, outcomes: Sequence[EntryOutcome], meta: Mapping[str, Any]) -> dict[str, Path]:
    """Write ``report.json`` (always, atomically) and, unless ``meta["status"] == "running"``, the plots,
    ``report.md`` and ``report.html``; return the paths written by kind (``json``, ``md``, ``html``)."""
    out_dir = Path(out_dir)
    paths = {"json": write_report_json(out_dir / "report.json", outcomes, meta)}
    if meta.get("status", "complete") == "running":
        return paths
    doc = report_dict(outcomes, meta)
    try:
        plots = draw_plots(out_dir, doc["entries"])
    except Exception as exc:  # noqa: BLE001 -- a plot that cannot be drawn never costs the report its pages
        plots, doc["plots_failed"] = {}, f"{type(exc).__name__}: {exc}"
    paths["md"] = out_dir / "report.md"
    write_text_atomic(paths["md"], render_markdown(doc, outcomes, plots))
    paths["html"] = out_dir / "report.html"
    write_text_atomic(paths["html"], render_html(doc, outcomes, plots, out_dir))
    return paths
