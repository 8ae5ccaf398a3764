"""Variants of tile.reduce."""
