"""The report model -> one self-contained HTML page: the template shipped with the package, charts inline as SVG."""

import re
from collections.abc import Sequence
from functools import partial
from importlib import resources

from disklab.report.html.charts import ChartSpec
from disklab.report.html.model import ReportModel
from disklab.report.parts import Parts
from disklab.report.html.svg import render_svg
from disklab.report.terminal import terminal_text

_TEMPLATE = "report.html.j2"
_LONG_WORD = re.compile(r"(\S{12,})")  # a path, an option string, a timestamp: wider than a narrow table column
_AFTER_SEPARATOR = re.compile(r"(?<=[/_.,:;=+@])(?=.)")  # browsers break after a hyphen already


def render_html(model: ReportModel, parts: Parts | None = None) -> str:
    """`parts` (when given) collects every part the page leaves out: the model's, and each chart that fails to draw."""
    from jinja2 import Environment, PackageLoader, StrictUndefined  # only the commands that write HTML load it

    environment = Environment(
        loader=PackageLoader("disklab.report.html", ""), autoescape=True, undefined=StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, finalize=shown,
    )
    environment.filters["breakable"] = breakable
    parts = Parts() if parts is None else parts
    parts.undrawn.extend(model.undrawn)
    charts = chart_markup(model.charts, parts)
    return environment.get_template(_TEMPLATE).render(report=model, charts=charts, undrawn=parts.undrawn,
                                                      download_script=download_script())


def chart_markup(charts: Sequence[ChartSpec], parts: Parts) -> list[tuple[ChartSpec, object]]:
    """Each chart with its SVG; one that cannot be drawn is left out and noted in `parts`."""
    from markupsafe import Markup

    # Our own SVG is trusted markup: svg.py escapes every text it writes into it.
    drawn = ((spec, parts.draw(f"chart {spec.title!r}", partial(render_svg, spec))) for spec in charts)
    return [(spec, Markup(svg)) for spec, svg in drawn if svg is not None]


def download_script() -> str:
    """The script behind every chart's SVG and PNG download (downloads.js): the report and the site pages share it."""
    from markupsafe import Markup

    return Markup((resources.files("disklab.report.html") / "downloads.js").read_text(encoding="utf-8"))


def shown(value):
    """Every value a template writes: text with its control and bidi characters written out (\\x1b, \\u202e), as
    terminals show it, so that a stored U+202E cannot turn the rest of a cell around; markup (our SVG) as it is."""
    return terminal_text(value, keep_lines=True) if isinstance(value, str) and not hasattr(value, "__html__") \
        else value


def breakable(value):
    """A table cell's text, shown, with a line break allowed after each separator of a long word ('/', '_', ','
    ...): a wide table then fits the page by breaking paths and option strings there, while short words, which no
    break is offered in, stay whole (CSS's overflow-wrap: anywhere would break 'complete' into 'com plete' too)."""
    from markupsafe import Markup, escape

    if not isinstance(value, str) or hasattr(value, "__html__"):
        return value
    pieces = _LONG_WORD.split(shown(value))  # the long words at the odd places
    return Markup("").join(Markup("<wbr>").join(map(escape, _AFTER_SEPARATOR.split(piece))) if index % 2
                           else escape(piece) for index, piece in enumerate(pieces))
