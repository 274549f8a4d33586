"""Everything that speaks fio: detection, job files, running it, reading its JSON."""
