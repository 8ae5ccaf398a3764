"""Variants of tile.iota."""
