"""CUDA lowerings: one module per variant, grouped by primitive. Importing registers them all."""

from tilemlir.lowering.cuda import sync  # noqa: F401
from tilemlir.lowering.cuda.copy import registers  # noqa: F401
from tilemlir.lowering.cuda.gemm import mma_sync  # noqa: F401
from tilemlir.lowering.cuda.gemm_async import tcgen05, wgmma  # noqa: F401
from tilemlir.lowering.cuda.copy_async import tmem_load  # noqa: F401
from tilemlir.lowering.cuda.copy import ldmatrix  # noqa: F401
from tilemlir.lowering.cuda.copy import stmatrix  # noqa: F401
from tilemlir.lowering.cuda.copy import vector  # noqa: F401
from tilemlir.lowering.cuda.copy_async import cp_async, tma  # noqa: F401
from tilemlir.lowering.cuda.cast import elementwise as cast_elementwise  # noqa: F401
from tilemlir.lowering.cuda.fill import elementwise as fill_elementwise  # noqa: F401
