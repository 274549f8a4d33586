"""A suite turned into the ordered tests of one run, fitted to its target, each written as a plain fio job file."""
