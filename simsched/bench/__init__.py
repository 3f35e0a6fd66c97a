"""Floor 8 — benchmarks: every ``simsched bench`` group, timed beside a baseline in the same run
(``dispatch`` picks the group).  Imports from floors 0-7."""
