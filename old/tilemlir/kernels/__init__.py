"""Shipped kernels, written in the kernel language (tilemlir.lang)."""
