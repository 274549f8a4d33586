"""The HTML report: a model assembled from stored runs, charts as inline SVG, rendered through one template."""
