"""The charts of the measured data itself, after the summaries' (charts.CHARTS): heat maps of grids, latency
percentiles and exceedance, time series."""

from disklab.report.html.charts import ChartFunction
from disklab.report.html.grid_charts import grid_charts
from disklab.report.html.latency_charts import exceedance_charts, latency_percentile_charts
from disklab.report.html.series_charts import time_series_charts

DATA_CHARTS: tuple[ChartFunction, ...] = (grid_charts, latency_percentile_charts, exceedance_charts, time_series_charts)
