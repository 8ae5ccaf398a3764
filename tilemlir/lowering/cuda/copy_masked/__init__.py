"""Variants of tile.copy_masked: copies of a window cut by run-time bounds."""
