"""A report's notes (report --notes) from Markdown to HTML that cannot run or fetch anything.

markdown-it-py (rich's own Markdown parser) in its CommonMark mode with raw HTML off: a <script> or an onclick
written in the notes comes out as text; links keep only the schemes markdown-it allows (no javascript:, no data:
but images, which are off too, so that the offline report loads nothing from anywhere).
"""

from disklab.report.terminal import terminal_text


def markdown_html(text: str) -> str:
    """Markup the page's template writes as it is; control and bidi characters are written out first (\\x1b,
    \\u202e), as every other text of the report."""
    from markdown_it import MarkdownIt  # only a report with notes loads it
    from markupsafe import Markup

    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    parser.disable("image")
    return Markup(parser.render(terminal_text(text, keep_lines=True)))
