"""The store in a web browser: `disklab serve` and `disklab publish` over the report's data model."""
