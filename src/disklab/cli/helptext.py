"""The examples that end every command's `--help` (and its man page's EXAMPLES), and `run --help`'s list of the
built-in suites, read from the suite registry when the help is shown so that a new suite file is listed without
an edit here."""

import click


def examples(*lines: str) -> str:
    """A click epilog of example command lines, kept as written (click would rewrap them)."""
    return "\b\nExamples:\n" + "".join(f"  {line}\n" for line in lines)


class ListsSuites(click.Command):
    """A command whose help names the built-in suites before its examples."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from disklab.suite.loader import builtin_names  # only when the help is shown: main.py imports this module

        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(f"Built-in suites ('disklab suites' says what each runs and how long it takes): "
                                 f"{', '.join(builtin_names())}.")
        super().format_epilog(ctx, formatter)


# run's and resume's here, as cli/run.py is at the size a module may have.
RUN_EXAMPLES = examples(
    "disklab run quick --target /mnt/data                 # a test file in that directory, removed afterwards",
    "disklab run matrix --target /mnt/data --dry-run      # the plan fitted to the target, and its duration",
    "disklab run matrix --target /dev/sdb --destroy-data --condition fresh,full")
RESUME_EXAMPLES = examples("disklab resume last     # the newest run, from its first unfinished test",
                           "disklab resume 12")
