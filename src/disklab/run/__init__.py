"""Carrying a plan out: schedules decide the next test from the results so far, execution runs it through fio."""
