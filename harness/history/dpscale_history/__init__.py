"""dpscale_history — the Python side of `dpscale history`, in three rooms kept apart:
store.py (the SQLite store: schema, migrations, rows in and out), changepoint.py (E-divisive
means with a permutation test: statistics only, no I/O) and page.py (the static HTML page);
rows.py checks the row the C++ side hands over, series.py turns stored runs into the series
the statistics and the page read, report.py prints tables. docs/history.md."""
