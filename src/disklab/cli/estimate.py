"""The estimate line of a run's header and of a dry run: the expected duration, and what it rests on where the
schedule decides its steps (a search's range, rounds' upper bound, a precision target's budget)."""

from disklab.plan.build import Plan
from disklab.run.precision import DEFAULT_MAX_PASSES, PrecisionSchedule
from disklab.run.schedule import FixedSchedule
from disklab.units import format_duration


def estimate_line(plan: Plan, layout: int, schedule) -> str:
    """With --repeat every pass counts, with --precision the least and the time budget; a saturate search gives its
    range of steps, rounds their upper bound."""
    if not plan.tests:
        return f"estimated duration: {format_duration(plan.estimated_seconds(layout))}"
    if plan.suite.saturation is not None:
        e = plan.estimate(layout)
        return (f"estimated duration: about {format_duration(e.seconds)} ({e.steps} steps expected; the search decides "
                f"how many: {e.low_steps} to {e.high_steps}, {format_duration(e.low_s)} to "
                f"{format_duration(e.high_s)})")
    if plan.suite.rounds is not None:
        e = plan.estimate(layout)
        rounds = (e.low_steps - len(plan.tests) + 1, e.high_steps - len(plan.tests) + 1)
        return (f"estimated duration: at most {format_duration(e.high_s)} (an upper bound: {rounds[1]} rounds), at "
                f"least {format_duration(e.low_s)} ({rounds[0]} rounds); the rounds stop once the suite's criteria "
                "are met")
    if not isinstance(schedule, (FixedSchedule, PrecisionSchedule)):
        return f"estimated duration: {format_duration(plan.estimated_seconds(layout))}"
    passes = schedule.expected_steps() // len(plan.tests)
    seconds = plan.estimate(layout, passes).seconds
    if isinstance(schedule, FixedSchedule):
        return f"estimated duration: {format_duration(seconds)}" + (f" (every test {passes} times)" if passes > 1 else "")
    budget = format_duration(schedule.max_seconds)
    if schedule.max_seconds < seconds:
        return (f"estimated duration: {budget}, the time budget (--max-time), plus the test in flight when it runs "
                f"out; every test {passes} times would take {format_duration(seconds)}, so some tests get fewer runs")
    return (f"estimated duration: at least {format_duration(seconds)} (every test at least {passes} times); then "
            f"tests repeat until their 95 % interval is within {schedule.target_percent:g} %, for at most {budget} "
            f"in all (the time budget: --max-time, by default {DEFAULT_MAX_PASSES} times one pass) plus the test in "
            "flight when it runs out")
