"""`serve`'s pages: the index of terminating objects and each object's `--explain`, as HTML.

Rendered on the server, no script: every string from the cluster (names, finalizers, event and
condition messages, annotations quoted in evidence) goes through html.escape, and the answer's
Content-Security-Policy allows nothing but the one inline style below (by its hash), so even
markup that slipped through could not run. Links are relative, so the pages work under any
prefix: directly, behind an ingress, or through the API server's service proxy. The index
narrows by plain links (the API's query parameters), and fits a 1280-px window: a cell's long
word (a name, a finalizer) breaks rather than widening the table past it.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping, Sequence
from html import escape
from urllib.parse import quote, urlencode

from kubectl_terminating.model import JSON, Blocker, ContentType, Finding, Remedy
from kubectl_terminating.render.explain import remaining_object
from kubectl_terminating.timeutil import human_duration

Extras = Callable[[Finding], JSON]  # kinds.json_extras: the fields a finding's kind adds
# each filter's values among the findings, with how many have each (web.facets)
Facets = Mapping[str, Sequence[tuple[str, int]]]
FILTER_LABELS = {"namespace": "Namespace", "kind": "Kind", "type": "Blocker type"}

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:80em;padding:0 1em;
color:#1b1b1b;overflow-wrap:anywhere}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.4em}h3{font-size:1.02em;margin:1em 0 .3em}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3em .6em;
border-bottom:1px solid #ddd;vertical-align:top}th{background:#f3f3f3}
th,td{overflow-wrap:normal}td.long{overflow-wrap:anywhere;min-width:8em}td.name{min-width:16em}
.filters p{margin:.25em 0}.filters a,.filters strong{margin-right:.7em}
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:600}dd{margin:0}
code,pre{font:13px ui-monospace,monospace;background:#f5f5f5;padding:.1em .3em;border-radius:3px}
pre{padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere}
.blocker{border:1px solid #ccc;border-radius:6px;padding:.2em 1em .6em;margin:1em 0}
.destructive{color:#b00020;font-weight:700}.muted{color:#666}
.certain{color:#0a5d00}.likely{color:#8a5a00}.possible{color:#555}
nav a{margin-right:1em}ol li{margin:.3em 0}
""".strip()
STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
# nothing but the style above; no script, frame, form, base or plugin
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src 'sha256-{STYLE_HASH}'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def object_path(resource: str, namespace: str | None, name: str) -> str:
    """`objects/RESOURCE/NS/NAME` (no namespace: `objects/RESOURCE/NAME`), relative, quoted."""
    parts = [resource, namespace, name] if namespace else [resource, name]
    return "objects/" + "/".join(quote(p, safe="") for p in parts)


def _document(title: str, root: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n<body>\n"
        f'<nav><a href="{escape(root)}">All terminating objects</a></nav>\n{body}\n</body></html>\n'
    )


def _overdue(finding: Finding) -> str:
    overdue = finding.overdue_seconds
    if overdue is None:
        return "unknown" if finding.unknowns else ""
    return "no, inside its grace period" if overdue < 0 else human_duration(overdue)


def _confidence(blocker: Blocker | None) -> str:
    if blocker is None or blocker.confidence is None:
        return '<span class="muted">not stated</span>'
    level = escape(blocker.confidence)
    return f'<span class="{level}">{level}</span>'


def index_page(
    rows: Sequence[tuple[Finding, str]], generated: str, filters: dict[str, str], facets: Facets
) -> str:
    """rows: each finding with its resource as the pages name it (`pods`,
    `widgets.example.com`), in the order shown; facets: the filter links offered."""
    shown = ", ".join(f"{k}={v}" for k, v in sorted(filters.items()))
    title = "Terminating objects" + (f" ({shown})" if shown else "")
    stuck = sum(1 for f, _ in rows if f.stuck)
    lines = [
        f"<h1>{escape(title)}</h1>",
        f'<p>{len(rows)} terminating, {stuck} stuck, the most overdue first. <span class="muted">'
        f"From the run of {escape(generated)}.</span></p>",
        _filter_links(filters, facets),
    ]
    if rows:
        lines.append(
            "<table><thead><tr><th>Kind</th><th>Namespace</th><th>Name</th><th>Terminating</th>"
            "<th>Overdue</th><th>Main blocker</th><th>Confidence</th></tr></thead><tbody>"
        )
        for finding, resource in rows:
            main = finding.main_blocker
            link = object_path(resource, finding.namespace, finding.name)
            blocker = f"{escape(main.summary)} <code>{escape(main.type)}</code>" if main else ""
            where, name = escape(finding.namespace or ""), escape(finding.name)
            lines.append(
                f'<tr><td>{escape(finding.kind)}</td><td class="long">{where}</td>'
                f'<td class="long name"><a href="{escape(link)}">{name}</a></td>'
                f"<td>{escape(human_duration(finding.terminating_seconds))}</td>"
                f'<td>{escape(_overdue(finding))}</td><td class="long">{blocker}</td>'
                f"<td>{_confidence(main)}</td></tr>"
            )
        lines.append("</tbody></table>")
    elif filters:
        lines.append("<p>Nothing terminating matches the filter.</p>")
    return _document(title, "./", "\n".join(lines))


def _filter_links(filters: dict[str, str], facets: Facets) -> str:
    """A line per filter: its values as links (the one chosen in bold, `any` to drop it), and
    the filter in force with a link that clears it."""
    out = ['<div class="filters">']
    if filters:
        shown = ", ".join(
            f"{FILTER_LABELS.get(k, k).lower()} {v}" for k, v in sorted(filters.items())
        )
        out.append(f'<p>Showing only {escape(shown)}. <a href="./">Clear the filter</a></p>')
    for key, label in FILTER_LABELS.items():
        values = facets.get(key, ())
        if not values:
            continue
        items = (
            [f'<a href="{escape(_query(filters, key, None))}">any</a>'] if key in filters else []
        )
        for value, count in values:
            text = f"{escape(value)}&nbsp;({count})"
            if _chosen(filters, key, value):
                items.append(f"<strong>{text}</strong>")
            else:
                items.append(f'<a href="{escape(_query(filters, key, value))}">{text}</a>')
        out.append(f"<p>{escape(label)}: {' '.join(items)}</p>")
    out.append("</div>")
    return "\n".join(out)


def _chosen(filters: dict[str, str], key: str, value: str) -> bool:
    given = filters.get(key)
    return given is not None and (
        given.lower() == value.lower() if key == "kind" else given == value
    )


def _query(filters: dict[str, str], key: str, value: str | None) -> str:
    """The index's relative link with key set to value (None: without key)."""
    wanted = {k: v for k, v in filters.items() if k != key}
    if value is not None:
        wanted[key] = value
    return "?" + urlencode(sorted(wanted.items())) if wanted else "./"


def object_page(
    finding: Finding, extras: Extras, generated: str, root: str, api: str, seen: str
) -> str:
    """The `--explain` of one finding; root: the relative way back to `/`; api: the
    relative link of its JSON; seen: when serve first saw it stuck."""
    title = f"{finding.kind} {finding.namespace + '/' if finding.namespace else ''}{finding.name}"
    body = _finding(finding, extras, 1, seen)
    note = (
        f'<p class="muted">{escape(generated)}. '
        f'The same as JSON: <a href="{escape(api)}">{escape(api.lstrip("./"))}</a></p>'
    )
    return _document(title, root, body + "\n" + note)


def error_page(code: int, message: str, root: str) -> str:
    return _document(f"{code}", root, f"<h1>{code}</h1><p>{escape(message)}</p>")


def _finding(finding: Finding, extras: Extras, level: int, seen: str | None = None) -> str:
    where = f"{finding.namespace}/" if finding.namespace else ""
    heading = f"h{min(level, 3)}"
    out = [f"<{heading}>{escape(finding.kind)} {escape(where + finding.name)}</{heading}>", "<dl>"]

    def field(label: str, value: str) -> None:
        out.append(f"<dt>{escape(label)}</dt><dd>{value}</dd>")

    if "node" in extras(finding):
        field("Node", escape(finding.node or "<none>"))
        field("Phase", escape(finding.phase or "<unknown>"))
    deadline = escape(finding.deletion_timestamp or "<unknown>")
    field("Terminating", f"{human_duration(finding.terminating_seconds)} (deadline {deadline})")
    if finding.overdue_seconds is not None or finding.unknowns:
        field("Overdue", escape(_overdue(finding)))
    if seen is not None:
        field("First seen stuck", escape(seen))
    finalizers = "".join(f"<code>{escape(f)}</code> " for f in finding.finalizers)
    field("Finalizers", finalizers or "&lt;none&gt;")
    if finding.containers:
        states = ", ".join(f"{c.get('name')}={c.get('state')}" for c in finding.containers)
        field("Containers", escape(states))
    if finding.conditions:
        items = (
            f"<li><code>{escape(str(c.get('type')))}={escape(str(c.get('status')))}</code> "
            f"{escape(str(c.get('reason') or ''))}: {escape(str(c.get('message') or ''))}</li>"
            for c in finding.conditions
        )
        field("Conditions", "<ul>" + "".join(items) + "</ul>")
    if finding.remaining is not None:
        field("Remaining", _remaining(finding.remaining))
    if finding.unknowns:
        field("Not known", escape("; ".join(finding.unknowns)))
    out.append("</dl>")
    if finding.blockers:
        out.append("<h3>Blockers (main first)</h3>")
        out.extend(_blocker(b, i) for i, b in enumerate(finding.blockers, 1))
    else:
        out.append("<p>Blockers: none found</p>")
    if finding.warnings:
        out.append("<h3>Warnings (checks that could not be made)</h3><ul>")
        out.extend(f"<li>{escape(str(w))}</li>" for w in finding.warnings)
        out.append("</ul>")
    out.extend(_finding(child, extras, level + 1) for child in finding.children)
    return "\n".join(out)


def _remaining(content: Sequence[ContentType]) -> str:
    if not content:
        return "nothing"
    items = []
    for c in content:
        state = f"cannot list: {c.error}" if c.error else str(c.count)
        objects = [f"<li>{escape(remaining_object(obj))}</li>" for obj in c.objects]
        inner = f"<ul>{''.join(objects)}</ul>" if objects else ""
        items.append(f"<li><code>{escape(c.resource)}</code>: {escape(state)}{inner}</li>")
    return "<ul>" + "".join(items) + "</ul>"


def _blocker(blocker: Blocker, index: int) -> str:
    out = [
        '<div class="blocker">',
        f"<h3>{index}. {escape(blocker.summary)} <code>{escape(blocker.type)}</code></h3>",
        f"<p>Confidence: {_confidence(blocker)}"
        + (f" ({escape(blocker.basis)})" if blocker.basis else "")
        + "</p>",
    ]
    if blocker.unchecked:
        out.append(f"<p>Not checked: {escape(str(blocker.unchecked))}</p>")
    if blocker.evidence:
        out.append("<p>Evidence:</p><ul>")
        for e in blocker.evidence:
            where = f"<code>{escape(str(e.object))}</code>: " if e.object is not None else ""
            out.append(f"<li>{where}{escape(e.message)}</li>")
        out.append("</ul>")
    if blocker.remedy:
        out.append("<p>What to do (safest first):</p><ol>")
        out.extend(_remedy(r) for r in blocker.remedy)
        out.append("</ol>")
    out.append("</div>")
    return "\n".join(out)


def _remedy(remedy: Remedy) -> str:
    label = '<span class="destructive">DESTRUCTIVE:</span> ' if remedy.destructive else ""
    out = f"<li>{label}{escape(remedy.description)}"
    if remedy.when:
        out += f"<br>only when: {escape(remedy.when)}"
    if remedy.command:
        out += f"<pre>$ {escape(remedy.command)}</pre>"
    return out + "</li>"
