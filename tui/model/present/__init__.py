"""What is shown: rows rasterised into cells, kinds, navigation, details, info, the table spec and
the text/Markdown/JSON reports. Pure data still (no textual or rich); the widgets paint it."""
