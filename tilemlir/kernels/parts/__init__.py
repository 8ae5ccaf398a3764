"""Shared parts of the Hopper kernels (hgemm_v6-v8, hgemm_fused, flash_attention): one module
per part, each built on device macros (@T.macro) or on small objects whose macro methods hold
the part's Python-level facts (stage count, tile sizes, buffers):

    checks     ShapeError and the configuration checks the kernel factories share
    roles      warp_specialized: the producer thread and the consumer warpgroups, each with
               its register budget; ClusterPair: a CTA's rank, peer and cluster in a 2x1 cluster
    ring       StageRing: full/empty mbarriers per stage, producer acquire, consumer wait and
               release (CTA or 2-CTA cluster form), phases from an iteration counter, the
               producer tail; Barriers: allocation and one-thread initialisation of them all
    mainloop   GemmStages: the A and B k-tiles in the ring's stages, the producer's TMA loads
               (B multicast across a 2x1 cluster) and the consumers' wgmma k-loop;
               CpAsyncStages: the same fed by the producer warpgroup's masked cp.async (any K)
    epilogue   TmaStore: registers -> staging buffer (stmatrix) -> TMA store, chunk by chunk,
               per warpgroup or for the whole CTA, with room for epilogue math in between;
               DirectStore: registers -> D with masked stores (any N); StagedStore: registers
               -> padded staging rows -> D in 16-byte units aligned to D's (any N)
    split_k    SplitK: publish a partial, count it, the last sums the partials in split order
    scheduler  tile_origin (grouped order), Persistent and TileSchedule: persistent work units,
               split-K and last-wave splits, waves and balanced clusters (also read by the
               GEMM front door's cost model)

A kernel reads as its mechanism, naming these parts; the seed-step kernels (hgemm_v4/v5, the
wgmma and tcgen05 steps, Blackwell) stay written out whole. The parts emit exactly the ops the
kernels wrote inline before them (bench/ptx_hashes.py checks the PTX byte for byte).
"""

from tilemlir.kernels.parts.checks import (DTYPES, SHARED_MEMORY_BYTES, ShapeError,
                                           check_epilogue_columns, check_gemm, check_pair,
                                           check_ragged_gemm, check_row_stride,
                                           check_splits, check_staging,
                                           consumer_regs, integral, producer_regs,
                                           staging_bytes, unaligned_epilogue)
from tilemlir.kernels.parts.epilogue import DirectStore, StagedStore, TmaStore, epilogue_store
from tilemlir.kernels.parts.mainloop import CpAsyncStages, GemmStages, k_tile_stages
from tilemlir.kernels.parts.ring import Barriers, StageRing
from tilemlir.kernels.parts.roles import ClusterPair, warp_specialized
from tilemlir.kernels.parts.scheduler import Persistent, TileSchedule, tile_origin
from tilemlir.kernels.parts.split_k import SplitK, split_k_buffers

__all__ = ["DTYPES", "SHARED_MEMORY_BYTES", "Barriers", "ClusterPair",
           "CpAsyncStages", "DirectStore", "GemmStages", "Persistent", "ShapeError", "SplitK",
           "StageRing", "StagedStore", "TileSchedule", "TmaStore", "check_epilogue_columns",
           "check_gemm", "check_pair", "check_ragged_gemm", "check_row_stride",
           "check_splits", "check_staging", "consumer_regs",
           "epilogue_store", "integral", "producer_regs", "split_k_buffers", "staging_bytes",
           "tile_origin", "unaligned_epilogue", "warp_specialized"]
