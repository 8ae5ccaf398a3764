"""The kernel language (write kernels the way seed 000 does). Users import `tilemlir.lang`."""
