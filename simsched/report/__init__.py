"""Floor 8 — pictures and documents: Gantt charts, Chrome/Perfetto traces, HTML run and study
reports, plots, number formatting and the generated reference pages.  Imports from floors 0-7."""
