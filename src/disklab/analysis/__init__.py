"""Statistics over stored results: confidence intervals of repeats, steady state, saturation."""
