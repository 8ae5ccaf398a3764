"""Variants of tile.copy_async_masked: asynchronous copies of a window cut by run-time bounds."""
