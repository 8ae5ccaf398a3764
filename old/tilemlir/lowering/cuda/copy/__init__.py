"""Variants of tile.copy and tile.copy_async."""
