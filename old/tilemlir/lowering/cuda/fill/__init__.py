"""Variants of tile.fill."""
