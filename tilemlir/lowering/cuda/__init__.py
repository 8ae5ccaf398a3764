"""CUDA lowerings: one module per variant, grouped by primitive. Importing registers them all."""

from tilemlir.lowering.cuda import sync  # noqa: F401
from tilemlir.lowering.cuda.copy import registers  # noqa: F401
from tilemlir.lowering.cuda.gemm import mma_sync  # noqa: F401
from tilemlir.lowering.cuda.gemm_async import tcgen05, wgmma  # noqa: F401
from tilemlir.lowering.cuda.copy_async import tmem_load  # noqa: F401
