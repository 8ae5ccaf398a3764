"""Variants of tile.copy_async."""
