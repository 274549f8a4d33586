"""Turn stored runs into tables and export formats."""
