"""Facts about a kernel's values that every pass shares: one value analysis (values.py: per op,
granularity across threads, known multiple, per-thread values) and what it says about the
threads that reach an op (threads.py), and which CTA of a pair reaches a block (cta_pair.py)."""
