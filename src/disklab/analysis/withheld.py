"""Flags that withhold a verdict: figures fio did not finish (a signal, a run cut short) and figures partly other
work's (a busy machine). Compare still shows them and their ratio, but calls no difference on them, and says why."""

from collections.abc import Iterable

from disklab.analysis.contention import BUSY_MACHINE

STOPPED_FLAG = "fio_stopped"  # a signal ended the job before its end: figures partial, or none
SHORT_FLAG = "fio_short_run"  # a time_based job ran far less than its runtime, and fio said nothing of why

WITHHELD_BY = {
    STOPPED_FLAG: "fio was stopped before this test ended (fio_stopped): its figures are partial",
    SHORT_FLAG: "fio ran this test far shorter than it asked (fio_short_run): its figures are partial",
    BUSY_MACHINE: ("other work ran beside this test (busy-machine): the difference may be the other work's; "
                   "run both on a quiet machine"),
}


def withheld_reason(flags: Iterable[str]) -> str | None:
    """Why a figure gets no better/worse, from the flags of the tests it rests on (either side); None: it may."""
    present = set(flags)
    return next((reason for flag, reason in WITHHELD_BY.items() if flag in present), None)
