"""Variants of tile.cast."""
