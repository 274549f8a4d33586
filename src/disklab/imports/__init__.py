"""fio output made elsewhere, by fio alone or another tool, turned into stored runs."""
